// Package extmod_test uses mcpspec as a library from another module: everything here is
// reachable without an internal/ package. archtest's TestExternalModule runs it with a replace
// directive to the checkout.
package extmod_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/detect/deadlock"
	"github.com/mcpspec/mcpspec/detect/fuzz"
	"github.com/mcpspec/mcpspec/detect/fuzz/mutate"
	"github.com/mcpspec/mcpspec/detect/headofline"
	"github.com/mcpspec/mcpspec/detect/probe"
	"github.com/mcpspec/mcpspec/detect/race"
	"github.com/mcpspec/mcpspec/loadgen"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/runner"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

// detectorReport is what every detector's report offers: test cases and a text rendering.
type detectorReport interface {
	Tests() []*result.Test
	WriteText(w io.Writer) error
}

// opener starts a reference server with o and returns the server-opening layer's view of it.
func opener(t *testing.T, o *mcptest.Options) *serverconn.Opener {
	t.Helper()
	srv := mcptest.NewServer(o)
	t.Cleanup(srv.Close)
	return openerFor(t, srv.URL)
}

func openerFor(t *testing.T, spec string) *serverconn.Opener {
	t.Helper()
	dial, info, err := serverconn.SpecDial(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	return serverconn.New(serverconn.Options{Info: info, Dial: dial, Session: session.Options{
		ConnectTimeout: 10 * time.Second, RequestTimeout: 20 * time.Second,
	}})
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

// failed checks a detector's report: its text renders, and some test case failed exactly
// when want says so.
func failed(t *testing.T, r detectorReport, want bool) {
	t.Helper()
	var b strings.Builder
	if err := r.WriteText(&b); err != nil || b.Len() == 0 {
		t.Errorf("WriteText: %v, %d bytes", err, b.Len())
	}
	tests := r.Tests()
	if len(tests) == 0 {
		t.Fatal("the report has no test cases")
	}
	got := false
	for _, tc := range tests {
		got = got || tc.Status == result.Failed
	}
	if got != want {
		t.Errorf("a failed test case: %v, want %v\n%s", got, want, b.String())
	}
}

func TestDeadlock(t *testing.T) {
	r, err := deadlock.Run(ctx(t), opener(t, &mcptest.Options{HangWhenConcurrent: true}), &deadlock.Options{
		Tool: "slow", Args: map[string]any{"milliseconds": 50},
		Concurrency: 4, HangAfter: 300 * time.Millisecond, Grace: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != deadlock.VerdictDeadlock || !r.Found() {
		t.Errorf("verdict %s", r.Verdict)
	}
	failed(t, r, true)
}

func TestRace(t *testing.T) {
	r, err := race.Run(ctx(t), opener(t, &mcptest.Options{Divergent: true}), &race.Options{
		Tool: "slow", Args: map[string]any{"milliseconds": 30}, Concurrency: 8, Rounds: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != race.VerdictRace || !r.Found() {
		t.Errorf("verdict %s: %s", r.Verdict, r.Diagnosis)
	}
	failed(t, r, true)
}

func TestHeadOfLine(t *testing.T) {
	r, err := headofline.Run(ctx(t), opener(t, &mcptest.Options{Serialize: true}), &headofline.Options{
		SlowTool: "slow", SlowArgs: map[string]any{"milliseconds": 200},
		FastTool: "echo", FastArgs: map[string]any{"text": "x"},
		Rounds: 3, SlowConcurrency: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != headofline.VerdictSerializes {
		t.Errorf("verdict %s", r.Verdict)
	}
	failed(t, r, true)
}

func TestFuzz(t *testing.T) {
	op := opener(t, &mcptest.Options{Era: mcptest.EraLegacy, MalformedMethod: "prompts/get"})
	r, err := fuzz.Run(ctx(t), op, &fuzz.Options{
		Iterations: 40, Seed: 1, Families: []mutate.Family{mutate.BadParams}, HangAfter: 2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) == 0 || r.Findings[0].Outcome != fuzz.Malformed || !r.Findings[0].Reproduced {
		t.Fatalf("findings %+v, want a reproduced malformed answer", r.Findings)
	}
	tests := r.Tests()
	if len(tests) == 0 {
		t.Fatal("no test cases")
	}
}

func TestProbe(t *testing.T) {
	srv := mcptest.NewServer(nil)
	t.Cleanup(srv.Close)
	dial, info, err := serverconn.SpecDial(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := probe.Run(ctx(t), &probe.Options{
		Server: serverconn.Options{Info: info, Dial: dial, Session: session.Options{ConnectTimeout: 10 * time.Second}},
		Checks: []string{"ping", "jsonrpc.method-not-found"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results) == 0 || r.Failed() {
		t.Errorf("%d results, failed %v", len(r.Results), r.Failed())
	}
	for _, res := range r.Results {
		if res.Status == probe.Fail {
			t.Errorf("%s %s: %s", res.ID, res.Era, res.Status)
		}
	}
}

func TestLoad(t *testing.T) {
	srv := mcptest.NewServer(nil)
	t.Cleanup(srv.Close)
	dial, info, err := serverconn.SpecDial(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := loadgen.Run(ctx(t), &loadgen.Config{
		Concurrency: 2, Iterations: 50, MaxDuration: time.Minute,
		Workload:   &loadgen.Workload{Entries: []loadgen.Entry{loadgen.ToolCall("echo", json.RawMessage(`{"text":"x"}`), 1)}},
		Server:     serverconn.Options{Info: info, Dial: dial},
		ServerSpec: srv.URL,
	})
	if err != nil {
		t.Fatal(err)
	}
	tp := res.Run.Throughput
	if tp.TotalRequests != 50 || tp.SuccessfulRequests != 50 || res.Run.Errors.Total != 0 {
		t.Errorf("throughput %+v, errors %+v: want 50 successful requests", tp, res.Run.Errors)
	}
}

func TestCollection(t *testing.T) {
	srv := mcptest.NewServer(nil)
	t.Cleanup(srv.Close)
	file := filepath.Join(t.TempDir(), "c.yaml")
	yaml := `schemaVersion: "1.0"
name: outside
server: ` + srv.URL + `
tests:
  - name: echo answers
    call: echo
    with: {text: hello}
    expect:
      - contains: hello
  - name: echo says otherwise
    call: echo
    with: {text: hello}
    expect:
      - contains: goodbye
`
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	col, err := collection.Load(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	run, err := runner.New(nil).Run(ctx(t), []*collection.Collection{col})
	if err != nil {
		t.Fatal(err)
	}
	if c := run.Counts(); c.Total != 2 || c.Passed != 1 || c.Failed != 1 || run.OK() {
		t.Errorf("counts %+v, ok %v: want one pass and one failure", c, run.OK())
	}
}
