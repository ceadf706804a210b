package runner_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/runner"
)

// TestDetectorBlocksRunAfterTheTests runs a collection with every detector block against two
// reference servers, one that serializes tool calls and one that answers concurrent calls
// differently: the race and head-of-line blocks fail with their evidence, the deadlock block
// passes (a server that queues calls is slow, not stuck), and the blocks' tools count as
// exercised.
func TestDetectorBlocksRunAfterTheTests(t *testing.T) {
	serial := tcpServer(t, &mcptest.Options{Serialize: true})
	racy := tcpServer(t, &mcptest.Options{Divergent: true})
	col := parse(t, `
name: Detectors
servers: {serial: tcp://SERIAL, racy: tcp://RACY}
defaults: {server: serial}
tests:
  - {id: add, call: add, with: {a: 1, b: 2}}
deadlock: {tool: echo, input: {text: "{{word}}"}, concurrent: 4, hangThreshold: 5s, gracePeriod: 5s}
race: {server: racy, tool: slow, input: {milliseconds: 20}, concurrent: 4, rounds: 1}
head-of-line: {slowTool: slow, slowInput: {milliseconds: 300}, fastTool: echo, fastInput: {text: fast}, slowConcurrent: 1, rounds: 3}
variables: {word: hi}
`, nil, "SERIAL", serial.Addr, "RACY", racy.Addr)
	rec := &recorder{}
	run, err := runCols(t, &runner.Options{OnEvent: rec.on}, col)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := map[string]result.Status{}
	kinds := map[string]string{}
	for _, tc := range run.Collections[0].Tests {
		got[tc.ID] = tc.Status
		kinds[tc.ID] = tc.Kind
		if want := map[bool]string{true: "racy", false: "serial"}[strings.HasPrefix(tc.ID, "race")]; tc.Server != want {
			t.Errorf("%s: server %q, want %q", tc.ID, tc.Server, want)
		}
	}
	want := map[string]result.Status{
		"add":                      result.Passed,
		"deadlock/echo":            result.Passed,
		"deadlock/tools/list race": result.Passed,
		"race/slow":                result.Failed,
		"head-of-line/echo/slow":   result.Failed,
	}
	for id, st := range want {
		if got[id] != st {
			t.Errorf("%s: %s, want %s (all: %v)", id, got[id], st, got)
		}
	}
	if kinds["race/slow"] != "race" || kinds["head-of-line/echo/slow"] != "head-of-line" {
		t.Errorf("kinds %v", kinds)
	}
	rt := find(t, run, "race/slow")
	if len(rt.Failures) == 0 || !strings.Contains(rt.Failures[0].Message, "divergent #") {
		t.Errorf("race failure carries no evidence: %+v", rt.Failures)
	}
	// Every block's test is announced and finished, after the collection's tests.
	k := rec.kinds()
	if i, j := slices.Index(k, "test-finished:add"), slices.Index(k, "test-finished:race/slow"); i < 0 || j < i || !slices.Contains(k, "test-started:race/slow") {
		t.Errorf("events %v", k)
	}
	cov := run.Collections[0].Coverage
	if cov == nil || len(cov.Servers) != 2 || cov.Servers[0].Tools == nil || cov.Servers[1].Tools == nil {
		t.Fatalf("coverage %+v", cov)
	}
	for i, want := range [][]string{{"slow"}, {"echo", "add", "slow"}} { // racy, serial (sorted by name)
		tools := cov.Servers[i].Tools
		if !slices.Equal(tools.Exercised, want) || !slices.Contains(tools.Missed, "flaky") {
			t.Errorf("%s: tools %+v, want %v exercised in list order, flaky missed", cov.Servers[i].Server, tools, want)
		}
	}
}

func TestDetectorBlocksFollowTheFilters(t *testing.T) {
	srv := tcpServer(t, nil)
	doc := `
server: tcp://ADDR
tests:
  - {id: a, tags: [smoke], call: echo, with: {text: x}}
race: {tool: echo, input: {text: x}, concurrent: 2, rounds: 1}
`
	for _, c := range []struct {
		name string
		opts runner.Options
		want bool
	}{
		{"no filter", runner.Options{}, true},
		{"a tag", runner.Options{Tags: []string{"smoke"}}, false},
		{"grep matching the block", runner.Options{Grep: regexp.MustCompile("race|^a$")}, true},
		{"grep not matching", runner.Options{Grep: regexp.MustCompile("^a$")}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			run, err := runCols(t, &c.opts, parse(t, doc, nil, "ADDR", srv.Addr))
			if err != nil {
				t.Fatal(err)
			}
			_, ran := statuses(run)["race/echo"]
			if ran != c.want {
				t.Errorf("race block ran: %v, want %v", ran, c.want)
			}
		})
	}
}

func TestDetectorBlockThatCannotRunErrors(t *testing.T) {
	srv := tcpServer(t, nil)
	run, err := runCols(t, nil, parse(t, "server: tcp://ADDR\nrace: {tool: nope}\n", nil, "ADDR", srv.Addr))
	if err != nil {
		t.Fatal(err)
	}
	tc := find(t, run, "race")
	if tc.Status != result.Errored || tc.Error == nil || !strings.Contains(tc.Error.Message, `"nope"`) || !strings.Contains(tc.Error.Hint, "echo") {
		t.Errorf("test %+v error %+v", tc.Status, tc.Error)
	}
}

func TestStrictChecksToolContracts(t *testing.T) {
	srv := tcpServer(t, nil)
	doc := `
server: tcp://ADDR
tests:
  - {id: good, call: add, with: {a: 1, b: 2}}
  - {id: negative, call: add, with: {a: "one", b: 2}, expectError: true}
  - {id: bad-args, call: add, with: {a: "one", b: 2}}
  - {id: unlisted, call: nope, expectError: true}
`
	for _, strict := range []bool{false, true} {
		run, err := runCols(t, &runner.Options{Strict: strict}, parse(t, doc, nil, "ADDR", srv.Addr))
		if err != nil {
			t.Fatal(err)
		}
		st := statuses(run)
		// A negative test is sent as written, --strict or not: the tool error is expected.
		if st["good"] != result.Passed || st["unlisted"] != result.Passed || st["negative"] != result.Passed {
			t.Errorf("strict %v: %v", strict, st)
		}
		bad := find(t, run, "bad-args")
		switch {
		case !strict && bad.Status != result.Failed:
			t.Errorf("without --strict bad arguments are sent and the tool error fails the test: %s %+v", bad.Status, bad.Error)
		case strict && (bad.Status != result.Errored || bad.Error.Category != "ProtocolError" || !strings.Contains(bad.Error.Message, "inputSchema")):
			t.Errorf("with --strict: %s %+v", bad.Status, bad.Error)
		}
	}
}

func TestCoverageOfPromptsAndResources(t *testing.T) {
	srv := tcpServer(t, nil)
	run, err := runCols(t, nil, parse(t, `
server: tcp://ADDR
tests:
  - {id: hello, read: "mcptest://static/hello.txt"}
  - {id: item, read: "mcptest://items/42"}
  - {id: raw-call, request: {method: tools/call, params: {name: echo, arguments: {text: x}}}}
`, nil, "ADDR", srv.Addr))
	if err != nil {
		t.Fatal(err)
	}
	cov := run.Collections[0].Coverage
	if cov == nil || len(cov.Servers) != 1 {
		t.Fatalf("coverage %+v", cov)
	}
	s := cov.Servers[0]
	if s.Resources == nil || s.Prompts == nil || s.Tools == nil {
		t.Fatalf("server coverage %+v", s)
	}
	if want := []string{"mcptest://static/hello.txt", "mcptest://items/{id}"}; !slices.Equal(s.Resources.Exercised, want) || s.Resources.Advertised != 4 {
		t.Errorf("resources %+v, want %v exercised of 4", s.Resources, want)
	}
	if len(s.Prompts.Exercised) != 0 || len(s.Prompts.Missed) == 0 {
		t.Errorf("prompts %+v", s.Prompts)
	}
	if !slices.Equal(s.Tools.Exercised, []string{"echo"}) {
		t.Errorf("tools %+v: a raw tools/call request exercises its tool", s.Tools)
	}
	e, a := run.Coverage()
	if e != 3 || a != s.Tools.Advertised+s.Prompts.Advertised+4 {
		t.Errorf("run coverage %d of %d", e, a)
	}
}
