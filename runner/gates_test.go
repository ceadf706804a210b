package runner_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/runner"
)

// TestGateBlocks: tokens:, score: and retrieval: each run after the tests as one test.
func TestGateBlocks(t *testing.T) {
	t.Parallel()
	srv := tcpServer(t, nil)
	golden := filepath.Join(t.TempDir(), "golden.yaml")
	if err := os.WriteFile(golden, []byte("queries:\n  - {id: sum, query: add two numbers, labels: [{tool: add, relevance: 2}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	col := parse(t, `
name: Gates
server: tcp://ADDR
tests:
  - {id: echo, call: echo, with: {text: hi}}
tokens: {budget: 20, maxPerTool: 100000}
score: {minimum: 50, golden: GOLDEN}
retrieval: {golden: GOLDEN}
`, nil, "ADDR", srv.Addr, "GOLDEN", golden)
	run, err := runCols(t, &runner.Options{}, col)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]result.Status{"echo": result.Passed, "tokens": result.Failed, "score": result.Passed, "retrieval": result.Passed}
	if d := cmp.Diff(want, statuses(run)); d != "" {
		t.Fatalf("statuses (-want +got):\n%s", d)
	}
	tok := find(t, run, "tokens")
	if len(tok.Failures) != 1 || !strings.Contains(tok.Failures[0].Message, "over the budget of 20") || tok.Failures[0].Line != 6 {
		t.Errorf("tokens failures %+v", tok.Failures)
	}
	if s := find(t, run, "score"); !strings.HasPrefix(s.Target, "MCP score ") {
		t.Errorf("score target %q", s.Target)
	}
	// The gates come after the tests, in block order.
	var ids []string
	for _, tt := range run.Collections[0].Tests {
		ids = append(ids, tt.ID)
	}
	if d := cmp.Diff([]string{"echo", "tokens", "score", "retrieval"}, ids); d != "" {
		t.Errorf("order (-want +got):\n%s", d)
	}
}
