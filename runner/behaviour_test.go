package runner_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/runner"
)

var fastBackoff = runner.Backoff{Initial: 5 * time.Millisecond, Max: 20 * time.Millisecond}

func TestRetriesKeepEveryAttempt(t *testing.T) {
	t.Parallel()
	// The first tools/call hangs: attempt 1 times out, attempt 2 passes.
	srv := tcpServer(t, &mcptest.Options{HangFirstCall: true})
	col := parse(t, `
name: Retries
server: tcp://ADDR
tests:
  - id: hangs-then-passes
    timeout: 300ms
    retries: 2
    call: echo
    with: {text: hi}
  - id: always-fails
    retries: 2
    call: echo
    with: {text: hi}
    expect:
      - contains: bye
`, nil, "ADDR", srv.Addr)
	run, err := runCols(t, &runner.Options{Backoff: fastBackoff}, col)
	if err != nil {
		t.Fatal(err)
	}
	h := find(t, run, "hangs-then-passes")
	var got []string
	for _, a := range h.Attempts {
		s := string(a.Status)
		if a.Error != nil {
			s += ":" + string(a.Error.Category)
		}
		got = append(got, s)
	}
	if d := cmp.Diff([]string{"error:Timeout", "passed"}, got); d != "" {
		t.Errorf("attempts (-want +got):\n%s", d)
	}
	if h.Status != result.Passed || h.Error != nil {
		t.Errorf("status %s error %+v, want passed without error", h.Status, h.Error)
	}
	a := find(t, run, "always-fails")
	if a.Status != result.Failed || len(a.Attempts) != 3 || len(a.Failures) != 1 {
		t.Errorf("always-fails: status %s, %d attempts, %d failures; want failed, 3, 1", a.Status, len(a.Attempts), len(a.Failures))
	}
}

func TestDependencySkipsAndExtraction(t *testing.T) {
	t.Parallel()
	srv := tcpServer(t, nil)
	col := parse(t, `
name: Deps
server: tcp://ADDR
tests:
  - id: needs-later
    dependsOn: [producer]
    call: echo
    with: {text: "got {{value}}"}
    expect:
      - equals: {path: "$.content[0].text", value: "got 7"}
  - id: producer
    tool: add
    input: {a: 3, b: 4}
    extract:
      - {name: value, path: $.structuredContent.sum}
  - id: broken
    call: echo
    with: {text: x}
    expect:
      - contains: y
  - id: after-broken
    dependsOn: [broken]
    call: echo
    with: {text: x}
  - id: after-after
    dependsOn: [after-broken]
    call: echo
    with: {text: x}
  - id: skipped-by-file
    skip: not today
    call: echo
    with: {text: x}
`, nil, "ADDR", srv.Addr)
	rec := &recorder{}
	run, err := runCols(t, &runner.Options{OnEvent: rec.on}, col)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]result.Status{"needs-later": result.Passed, "producer": result.Passed, "broken": result.Failed,
		"after-broken": result.Skipped, "after-after": result.Skipped, "skipped-by-file": result.Skipped}
	if d := cmp.Diff(want, statuses(run)); d != "" {
		t.Errorf("statuses (-want +got):\n%s", d)
	}
	if r := find(t, run, "after-broken").SkipReason; !strings.Contains(r, `"broken" failed`) {
		t.Errorf("after-broken skip reason %q", r)
	}
	if r := find(t, run, "after-after").SkipReason; !strings.Contains(r, `"after-broken" was skipped`) {
		t.Errorf("after-after skip reason %q", r)
	}
	if r := find(t, run, "skipped-by-file").SkipReason; r != "not today" {
		t.Errorf("skipped-by-file reason %q", r)
	}
	// The result keeps file order; the producer ran first.
	var ids []string
	for _, x := range run.Collections[0].Tests {
		ids = append(ids, x.ID)
	}
	if d := cmp.Diff([]string{"needs-later", "producer", "broken", "after-broken", "after-after", "skipped-by-file"}, ids); d != "" {
		t.Errorf("result order (-want +got):\n%s", d)
	}
	k := rec.kinds()
	if slices.Index(k, "test-finished:producer") > slices.Index(k, "test-started:needs-later") {
		t.Errorf("needs-later started before producer finished: %v", k)
	}
}

func TestSecretsNeverReachTheResult(t *testing.T) {
	t.Parallel()
	srv := tcpServer(t, nil)
	secrets := []string{"tok-SECRET-9876", "xyz-EXTRACTED-5555", "hunter2-pass", `quo"te-secret`}
	env := map[string]string{"DB_PASS": "hunter2-pass"}
	col := parse(t, `
name: Secrets
server: tcp://ADDR
variables:
  apiToken: tok-SECRET-9876
  quotedPassword: 'quo"te-secret'
tests:
  - id: failure-values
    call: echo
    with: {text: "key={{apiToken}}"}
    expect:
      - equals: {path: "$.content[0].text", value: "nope {{apiToken}}"}
      - contains: "{{secret.DB_PASS}}"
  - id: quoted
    call: echo
    with: {text: "{{quotedPassword}}"}
    expect:
      - contains: nothing
  - id: extract-token
    call: echo
    with: {text: xyz-EXTRACTED-5555}
    extract:
      - {name: sessionToken, path: "$.content[0].text"}
  - id: use-token
    call: echo
    with: {text: "again {{sessionToken}} and {{secret.DB_PASS}}"}
    expect:
      - matches: "^never$"
  - id: error-message
    call: error
    with: {message: "failed for {{apiToken}}", category: protocol}
  - id: tool-error
    call: error
    with: {message: "tool says {{sessionToken}}", as_tool: true}
  - id: expected-error-mismatch
    call: error
    with: {message: "{{apiToken}}", category: protocol}
    expectError: {message: "other {{apiToken}}"}
`, &collection.LoadOptions{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}, "ADDR", srv.Addr)
	run, err := runCols(t, nil, col)
	if err != nil {
		t.Fatal(err)
	}
	if st := statuses(run); st["extract-token"] != result.Passed || st["failure-values"] != result.Failed {
		t.Fatalf("statuses %v", st)
	}
	doc := mustJSON(t, run)
	for _, s := range secrets {
		if strings.Contains(doc, s) || strings.Contains(doc, strings.ReplaceAll(s, `"`, `\"`)) {
			t.Errorf("secret %q occurs in the result:\n%s", s, doc)
		}
	}
	if !strings.Contains(doc, collection.Mask) {
		t.Errorf("the result shows no mask at all: %s", doc)
	}
	if got := find(t, run, "extract-token").Extracted["sessionToken"]; got != collection.Mask {
		t.Errorf("extracted secret shown as %q", got)
	}
}

func TestParallelRespectsDependencies(t *testing.T) {
	t.Parallel()
	srv := tcpServer(t, nil)
	var b strings.Builder
	b.WriteString("name: Parallel\nserver: tcp://ADDR\ntests:\n")
	for _, id := range []string{"p1", "p2", "p3", "p4", "p5", "p6"} {
		b.WriteString("  - {id: " + id + ", call: slow, with: {milliseconds: 150}}\n")
	}
	b.WriteString(`  - id: first
    tool: add
    input: {a: 1, b: 1}
    extract: [{name: two, path: $.structuredContent.sum}]
  - id: second
    dependsOn: [first]
    call: slow
    with: {milliseconds: 50}
  - id: third
    call: echo
    with: {text: "n={{two}}"}
    expect: [{contains: "2"}]
    dependsOn: [second]
`)
	col := parse(t, b.String(), nil, "ADDR", srv.Addr)
	rec := &recorder{}
	run, err := runCols(t, &runner.Options{Parallel: 4, OnEvent: rec.on}, col)
	if err != nil {
		t.Fatal(err)
	}
	for id, s := range statuses(run) {
		if s != result.Passed {
			t.Errorf("%s: %s (%+v)", id, s, find(t, run, id))
		}
	}
	st := srv.Stats()
	if st.MaxInFlight < 2 || st.MaxInFlight > 4 {
		t.Errorf("max tools/calls in flight = %d, want 2..4", st.MaxInFlight)
	}
	if st.Sessions > 4 {
		t.Errorf("%d sessions opened, want at most 4", st.Sessions)
	}
	k := rec.kinds()
	for _, pair := range [][2]string{{"first", "second"}, {"second", "third"}} {
		if slices.Index(k, "test-finished:"+pair[0]) > slices.Index(k, "test-started:"+pair[1]) {
			t.Errorf("%s started before %s finished: %v", pair[1], pair[0], k)
		}
	}
}

func TestBailStopsTheRun(t *testing.T) {
	t.Parallel()
	srv := tcpServer(t, nil)
	col := parse(t, `
name: Bail
server: tcp://ADDR
tests:
  - {id: ok, call: echo, with: {text: a}}
  - {id: bad, call: echo, with: {text: a}, expect: [{contains: b}]}
  - {id: later, call: echo, with: {text: a}}
`, nil, "ADDR", srv.Addr)
	run, err := runCols(t, &runner.Options{Bail: true}, col, col)
	if err != nil {
		t.Fatal(err)
	}
	if !run.Interrupted {
		t.Error("Interrupted not set")
	}
	if run.BailedAfter != run.Collections[0].Tests[1].Name {
		t.Errorf("BailedAfter = %q, want the failing test %q", run.BailedAfter, run.Collections[0].Tests[1].Name)
	}
	for _, c := range run.Collections[1:] {
		for _, x := range c.Tests {
			if x.Status != result.Skipped {
				t.Errorf("second collection: %s is %s, want skipped", x.ID, x.Status)
			}
		}
	}
	later := run.Collections[0].Tests[2]
	if later.Status != result.Skipped || !strings.Contains(later.SkipReason, "--bail") {
		t.Errorf("later: %s %q", later.Status, later.SkipReason)
	}
}

func TestInterruptReturnsPartialRun(t *testing.T) {
	t.Parallel()
	srv := tcpServer(t, nil)
	col := parse(t, `
name: Interrupt
server: tcp://ADDR
tests:
  - {id: quick, call: echo, with: {text: a}}
  - {id: long, call: slow, with: {milliseconds: 20000}}
  - {id: never, call: echo, with: {text: a}}
`, nil, "ADDR", srv.Addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	onEvent := func(e result.Event) {
		if e.Kind == result.TestStarted && e.Test.ID == "long" {
			// Let the request reach the server, then press Ctrl-C.
			time.AfterFunc(100*time.Millisecond, cancel)
		}
	}
	start := time.Now()
	run, err := runner.New(&runner.Options{OnEvent: onEvent}).Run(ctx, []*collection.Collection{col})
	if !errors.Is(err, runner.ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("the interrupted run took %s", elapsed)
	}
	if run == nil || !run.Interrupted {
		t.Fatalf("run %+v: want a partial run marked Interrupted", run)
	}
	want := map[string]result.Status{"quick": result.Passed, "long": result.Errored, "never": result.Skipped}
	if d := cmp.Diff(want, statuses(run)); d != "" {
		t.Errorf("statuses (-want +got):\n%s", d)
	}
	if e := find(t, run, "long").Error; e == nil || e.Category != "Cancelled" {
		t.Errorf("long: error %+v, want Cancelled", e)
	}
	if r := find(t, run, "never").SkipReason; r != "run interrupted" {
		t.Errorf("never: reason %q", r)
	}
}

func TestTagsAndGrepPullInDependencies(t *testing.T) {
	t.Parallel()
	srv := tcpServer(t, nil)
	col := parse(t, `
name: Filters
server: tcp://ADDR
tests:
  - id: setup
    tool: add
    input: {a: 1, b: 2}
    extract: [{name: three, path: $.structuredContent.sum}]
  - {id: smoke-a, tags: [smoke], call: echo, with: {text: "n={{three}}"}}
  - {id: slow-b, tags: [slow], call: echo, with: {text: b}}
  - {id: other, call: echo, with: {text: c}}
`, nil, "ADDR", srv.Addr)
	cases := []struct {
		name string
		opts runner.Options
		want []string
	}{
		{"tag", runner.Options{Tags: []string{"smoke"}}, []string{"setup", "smoke-a"}},
		{"two tags", runner.Options{Tags: []string{"smoke", "slow"}}, []string{"setup", "smoke-a", "slow-b"}},
		{"grep", runner.Options{Grep: regexp.MustCompile("^oth")}, []string{"other"}},
		{"tag and grep", runner.Options{Tags: []string{"slow"}, Grep: regexp.MustCompile("smoke")}, nil},
		{"none", runner.Options{}, []string{"setup", "smoke-a", "slow-b", "other"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run, err := runCols(t, &tc.opts, col)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, x := range run.Collections[0].Tests {
				got = append(got, x.ID)
				if x.Status != result.Passed {
					t.Errorf("%s: %s", x.ID, x.Status)
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("tests run (-want +got):\n%s", d)
			}
		})
	}
}

func TestConnectionFailures(t *testing.T) {
	t.Parallel()
	srv := tcpServer(t, nil)
	two := parse(t, `
name: Two servers
servers:
  good: {url: tcp://ADDR}
  bad: {url: "tcp://127.0.0.1:1", timeouts: {connect: 2s}}
tests:
  - {id: on-bad, server: bad, call: echo, with: {text: a}}
  - {id: on-bad-again, server: bad, call: echo, with: {text: a}}
  - {id: on-good, server: good, call: echo, with: {text: a}}
`, nil, "ADDR", srv.Addr)
	run, err := runCols(t, nil, two)
	if err != nil {
		t.Fatalf("one good server: err = %v, want nil", err)
	}
	// The bad server is tried once: its second test is not run and points at the first.
	want := map[string]result.Status{"on-bad": result.Errored, "on-bad-again": result.Skipped, "on-good": result.Passed}
	if d := cmp.Diff(want, statuses(run)); d != "" {
		t.Errorf("statuses (-want +got):\n%s", d)
	}
	e := find(t, run, "on-bad").Error
	if e == nil || e.Category != "Disconnected" || e.Hint == "" || !strings.Contains(e.Message, "refused") {
		t.Errorf("on-bad error = %+v", e)
	}
	if got, want := find(t, run, "on-bad-again").SkipReason, `not run: server "bad" could not be connected: see "on-bad"`; got != want {
		t.Errorf("on-bad-again: skip reason %q, want %q", got, want)
	}

	onlyBad := parse(t, `
name: Bad only
server: {url: "tcp://127.0.0.1:1"}
tests:
  - {id: x, call: echo, with: {text: a}}
`, nil)
	run, err = runCols(t, nil, onlyBad)
	var ce *runner.ConnectError
	if !errors.As(err, &ce) || len(ce.Servers) != 1 {
		t.Fatalf("err = %v, want a ConnectError naming one server", err)
	}
	if run == nil || run.Counts().Errored != 1 {
		t.Errorf("run = %+v, want one errored test", run)
	}
}

func TestCrashReopensTheSession(t *testing.T) {
	t.Parallel()
	srv := tcpServer(t, &mcptest.Options{CrashRate: 1})
	col := parse(t, `
name: Crash
server: tcp://ADDR
tests:
  - {id: one, call: echo, with: {text: a}}
  - {id: two, call: echo, with: {text: a}}
  - {id: listing, list: tools}
`, nil, "ADDR", srv.Addr)
	run, err := runCols(t, nil, col)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"one", "two"} {
		x := find(t, run, id)
		if x.Status != result.Errored || x.Error == nil || (x.Error.Category != "Disconnected" && x.Error.Category != "Crash") {
			t.Errorf("%s: %s %+v, want an errored crash", id, x.Status, x.Error)
		}
	}
	if s := find(t, run, "listing").Status; s != result.Passed {
		t.Errorf("listing after crashes: %s", s)
	}
	if n := srv.Stats().Sessions; n != 3 {
		t.Errorf("%d sessions, want 3 (one per crash plus a fresh one)", n)
	}
}

func TestParallelSessionsSeeOutputSchemas(t *testing.T) {
	t.Parallel()
	// Sessions opened while the first one lists the tools must still see the output schemas.
	srv := tcpServer(t, nil)
	var b strings.Builder
	b.WriteString("name: Schemas\nserver: tcp://ADDR\ntests:\n")
	for i := range 8 {
		fmt.Fprintf(&b, "  - {id: add%d, tool: add, input: {a: %d, b: 1}, assertions: [{type: schema}]}\n", i, i)
	}
	col := parse(t, b.String(), nil, "ADDR", srv.Addr)
	for range 3 {
		run, err := runCols(t, &runner.Options{Parallel: 4}, col)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range run.Collections[0].Tests {
			if x.Status != result.Passed {
				t.Fatalf("%s: %s %+v", x.ID, x.Status, x.Failures)
			}
		}
	}
}

func TestHandshakeWithAWebPage(t *testing.T) {
	t.Parallel()
	// An HTTP server that answers every request with an HTML page: the error quotes the page
	// once, in the message, and the hint speaks of URLs, not of stdout.
	page := "<html><head><title>Dashboard</title></head><body>hi</body></html>"
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, page)
	}))
	defer web.Close()
	col := parse(t, `
name: Web page
server: {url: "URL/mcp", transport: http, timeouts: {connect: 1s}}
tests:
  - {id: x, call: echo, with: {text: a}}
`, nil, "URL", web.URL)
	run, _ := runCols(t, nil, col)
	e := find(t, run, "x").Error
	if e == nil {
		t.Fatal("no error")
	}
	if e.Category != "Malformed" {
		t.Errorf("category = %s, want Malformed", e.Category)
	}
	if n := strings.Count(e.Message+e.Hint, "Dashboard"); n != 1 {
		t.Errorf("the page is quoted %d times, want once:\nmessage: %s\nhint: %s", n, e.Message, e.Hint)
	}
	if strings.Contains(e.Hint, "stdout") || !strings.Contains(e.Hint, "MCP endpoint") {
		t.Errorf("hint = %q, want one about the URL, not stdout", e.Hint)
	}
}

// TestTestTimeoutStartsAtTheFirstRequest: starting the server and the handshake are bounded by
// timeouts.connect, not by a test's timeout, so a short test timeout passes against a server
// slower to start than it (one test at a time and in parallel, where later tests wait for the
// first session).
func TestTestTimeoutStartsAtTheFirstRequest(t *testing.T) {
	t.Parallel()
	for _, parallel := range []int{1, 2} {
		// A fresh server each time: it is slow only to start.
		srv := tcpServer(t, &mcptest.Options{SlowInitialize: 400 * time.Millisecond})
		col := parse(t, `
name: Slow start
server: {url: tcp://ADDR, timeouts: {connect: 10s}}
defaults: {timeout: 150ms}
tests:
  - {id: a, call: echo, with: {text: a}}
  - {id: b, call: echo, with: {text: b}}
`, nil, "ADDR", srv.Addr)
		run, err := runCols(t, &runner.Options{Parallel: parallel}, col)
		if err != nil {
			t.Fatalf("parallel %d: %v", parallel, err)
		}
		want := map[string]result.Status{"a": result.Passed, "b": result.Passed}
		if d := cmp.Diff(want, statuses(run)); d != "" {
			t.Errorf("parallel %d: statuses (-want +got):\n%s\na: %+v", parallel, d, find(t, run, "a").Error)
		}
	}
}

// TestFallbackRecordedAsSSE: an http URL that only answers the legacy HTTP+SSE transport is
// recorded as transport sse, the one the session settled on.
func TestFallbackRecordedAsSSE(t *testing.T) {
	t.Parallel()
	srv := mcptest.NewServer(nil)
	t.Cleanup(srv.Close)
	col := parse(t, "name: F\nserver: URL\ntests:\n  - {id: a, call: echo, with: {text: a}}\n", nil, "URL", srv.SSEURL)
	run, err := runCols(t, nil, col)
	if err != nil {
		t.Fatal(err)
	}
	if got := run.Collections[0].Servers; len(got) != 1 || got[0].Transport != "sse" {
		t.Errorf("servers = %+v, want one recorded as sse", got)
	}
}
