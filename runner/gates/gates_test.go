package gates

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

func open(t *testing.T) (context.Context, *session.Session) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	srv := mcptest.NewServer(nil)
	t.Cleanup(srv.Close)
	d, _, err := spec.Parse(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(ctx, d, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return ctx, s
}

func TestTokens(t *testing.T) {
	ctx, s := open(t)
	if r := Tokens(ctx, s, "api", &collection.TokensSpec{Encoding: "o200k_base", Budget: 100000, MaxPerTool: 1000}); r.Status != result.Passed || !strings.Contains(r.Target, "6 tools") {
		t.Errorf("within budget: %+v", r)
	}
	r := Tokens(ctx, s, "api", &collection.TokensSpec{Encoding: "cl100k_base", Budget: 10, MaxPerTool: 100, Pos: collection.Pos{Line: 7}})
	if r.Status != result.Failed || len(r.Failures) < 2 || r.Failures[0].Assertion != "tokens.budget" || r.Failures[0].Line != 7 {
		t.Fatalf("over budget: %+v", r)
	}
	if f := r.Failures[1]; f.Assertion != "tokens.maxPerTool" || f.Path != "flaky" {
		t.Errorf("per tool: %+v", f)
	}
	if len(r.Attempts) != 1 || r.Attempts[0].Status != result.Failed {
		t.Errorf("attempts %+v", r.Attempts)
	}
}

func TestScore(t *testing.T) {
	ctx, s := open(t)
	if r := Score(ctx, s, "api", &collection.ScoreSpec{Minimum: 50}); r.Status != result.Passed || !strings.HasPrefix(r.Target, "MCP score ") {
		t.Errorf("above minimum: %+v", r)
	}
	r := Score(ctx, s, "api", &collection.ScoreSpec{Minimum: 100})
	if r.Status != result.Failed || !strings.Contains(r.Failures[0].Message, "most points lost: metadata.") {
		t.Errorf("below minimum: %+v", r.Failures)
	}
	if r := Score(ctx, s, "api", &collection.ScoreSpec{Minimum: 1, Golden: "missing.yaml"}); r.Status != result.Errored {
		t.Errorf("missing golden set: %+v", r)
	}
}

func TestRetrieval(t *testing.T) {
	ctx, s := open(t)
	dir := t.TempDir()
	golden := filepath.Join(dir, "g.yaml")
	if err := os.WriteFile(golden, []byte("queries:\n  - {id: sum, query: add two numbers, labels: [{tool: add, relevance: 2}]}\n  - {id: wait, query: sleep milliseconds, labels: [{tool: slow, relevance: 2}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := Retrieval(ctx, s, "api", &collection.RetrievalSpec{Golden: golden, QueryArg: "query", Tolerance: 0.02})
	if r.Status != result.Passed || !strings.Contains(r.Target, "MRR 1.0000") {
		t.Fatalf("bm25: %+v", r)
	}
	// A baseline better than what echo-as-search-tool finds: the gate fails.
	base := filepath.Join(dir, "base.json")
	if err := os.WriteFile(base, []byte(`{"schemaVersion":"retrieval.v1","metrics":{"recallAt":{"1":1,"5":1},"mrr":1,"ndcgAt10":1,"map":1}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r = Retrieval(ctx, s, "api", &collection.RetrievalSpec{Golden: golden, SearchTool: "echo", QueryArg: "text", Baseline: base, Tolerance: 0.02})
	if r.Status != result.Failed || r.Failures[0].Assertion != "retrieval.baseline" {
		t.Errorf("gate: %+v", r)
	}
	if r := Retrieval(ctx, s, "api", &collection.RetrievalSpec{Golden: filepath.Join(dir, "none.yaml")}); r.Status != result.Errored || r.Error == nil {
		t.Errorf("missing golden: %+v", r)
	}
}
