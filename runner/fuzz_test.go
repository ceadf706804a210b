package runner_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/runner"
)

// TestFuzzBlock: a collection's fuzz: block runs after the tests on its own sessions of the
// server; each finding is a failed test, each family without one a passed test; the findings
// are saved as a collection whose tests fail on the buggy server and pass on a fixed one.
func TestFuzzBlock(t *testing.T) {
	t.Parallel()
	bad := tcpServer(t, &mcptest.Options{PanicOnWrongType: true, Era: mcptest.EraLegacy})
	saved := filepath.Join(t.TempDir(), "out", "findings.yaml")
	col := parse(t, `
name: fuzzed
server: {transport: tcp, url: "{{ADDR}}"}
tests: [{name: echo, call: echo, with: {text: hi}}]
fuzz: {iterations: 30, seed: 3, payloads: [schema, bad-method], tools: [echo], hangAfter: 2s, saveFindings: "{{SAVED}}"}
`, nil, "{{ADDR}}", bad.Addr, "{{SAVED}}", saved)
	run, err := runCols(t, nil, col)
	if err != nil {
		t.Fatal(err)
	}
	if st := statuses(run); st["echo"] != result.Passed || st["fuzz-f1"] != result.Failed || st["fuzz-bad-method"] != result.Passed {
		t.Errorf("statuses %v", st)
	}
	f1 := find(t, run, "fuzz-f1")
	if f1.Kind != "fuzz" || !strings.Contains(f1.Name, "crash") || f1.Server != "default" || !strings.Contains(f1.Request, "tools/call echo") {
		t.Errorf("finding test %+v", f1)
	}

	// The saved findings replay: failing while the bug is there …
	data, err := os.ReadFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	replay := func(addr string) *result.Run {
		t.Helper()
		doc := strings.ReplaceAll(string(data), bad.Addr, addr)
		c, err := collection.Parse(filepath.Join(t.TempDir(), "findings.yaml"), []byte(doc), nil)
		if err != nil {
			t.Fatalf("saved findings do not load: %v\n%s", err, doc)
		}
		r, _ := runner.New(nil).Run(t.Context(), []*collection.Collection{c})
		return r
	}
	if r := replay(bad.Addr); r.OK() {
		t.Errorf("saved findings pass on the buggy server:\n%s", data)
	}
	// … and passing once it is fixed.
	good := tcpServer(t, &mcptest.Options{Era: mcptest.EraLegacy})
	if r := replay(good.Addr); !r.OK() {
		for _, tt := range r.Collections[0].Tests {
			t.Errorf("on the fixed server: %s: %s %+v %+v", tt.Name, tt.Status, tt.Error, tt.Failures)
		}
	}
}

// TestFrameStep: a raw frame step passes on graceful handling (an answer, an error, silence)
// and fails on a malformed answer, or when the frame kills the session.
func TestFrameStep(t *testing.T) {
	t.Parallel()
	malformed := tcpServer(t, &mcptest.Options{MalformedMethod: "prompts/list", Era: mcptest.EraLegacy})
	col := parse(t, `
name: frames
server: {transport: tcp, url: "{{ADDR}}"}
tests:
  - {id: answered, frame: '{"jsonrpc":"2.0","id":900001,"method":"tools/list"}', expect: [{exists: $.tools}]}
  - {id: rejected, frame: '{"jsonrpc":"2.0","id":900002,"method":"nope"}', expectError: {code: -32601}}
  - {id: rejected-plain, frame: '{"jsonrpc":"2.0","id":900003,"method":"nope"}'}
  - {id: garbage, frame: '{not json'}
  - {id: bytes, frame: {base64: "/3sK"}}
  - {id: malformed, frame: '{"jsonrpc":"2.0","id":900004,"method":"prompts/list"}'}
`, nil, "{{ADDR}}", malformed.Addr)
	run, err := runCols(t, nil, col)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]result.Status{"answered": result.Passed, "rejected": result.Passed, "rejected-plain": result.Passed,
		"garbage": result.Passed, "bytes": result.Passed, "malformed": result.Errored}
	for id, st := range want {
		if got := find(t, run, id); got.Status != st {
			t.Errorf("%s: %s (%+v %+v), want %s", id, got.Status, got.Error, got.Failures, st)
		}
	}
	if e := find(t, run, "malformed").Error; e == nil || e.Category != "Malformed" {
		t.Errorf("malformed: error %+v", e)
	}
}
