package retrieval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/analyze/inventory"
	"github.com/mcpspec/mcpspec/internal/golden"
	"github.com/mcpspec/mcpspec/session"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

// TestMetricsHandComputed: values worked out by hand. Labels: a = 2, b = 1, c = 0.
func TestMetricsHandComputed(t *testing.T) {
	labels := []Label{{"a", 2}, {"b", 1}, {"c", 0}}
	cases := []struct {
		name               string
		ranked             []string
		r1, r2, r4, rr, ap float64
		ndcg10, ndcg3      float64
	}{
		// c, a, x, b: a at 2, b at 4. DCG = 2/log2(3) + 1/log2(5); IDCG = 2 + 1/log2(3).
		{"mixed", []string{"c", "a", "x", "b"}, 0, 0.5, 1, 0.5, (0.5 + 0.5) / 2, 0.6433224083, 0.4796249331},
		{"ideal", []string{"a", "b"}, 0.5, 1, 1, 1, 1, 1, 1},
		// b before a: DCG = 1 + 2/log2(3) = 2.2618595; IDCG = 2.6309298.
		{"swapped", []string{"b", "a"}, 0.5, 1, 1, 1, 1, 2.2618595071 / 2.6309297536, 2.2618595071 / 2.6309297536},
		{"nothing", nil, 0, 0, 0, 0, 0, 0, 0},
		{"irrelevant only", []string{"c", "x"}, 0, 0, 0, 0, 0, 0, 0},
		// a, a, b: the repeat counts once. AP = (1/1 + 2/3) / 2; DCG = 2 + 1/log2(4).
		{"repeat", []string{"a", "a", "b"}, 0.5, 0.5, 1, 1, (1 + 2.0/3) / 2, 0.9502344168, 0.9502344168},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := []float64{RecallAtK(c.ranked, labels, 1), RecallAtK(c.ranked, labels, 2), RecallAtK(c.ranked, labels, 4),
				ReciprocalRank(c.ranked, labels), AveragePrecision(c.ranked, labels), NDCGAtK(c.ranked, labels, 10), NDCGAtK(c.ranked, labels, 3)}
			want := []float64{c.r1, c.r2, c.r4, c.rr, c.ap, c.ndcg10, c.ndcg3}
			names := []string{"R@1", "R@2", "R@4", "RR", "AP", "nDCG@10", "nDCG@3"}
			for i := range got {
				if !near(got[i], want[i]) {
					t.Errorf("%s = %.10f, want %.10f", names[i], got[i], want[i])
				}
			}
		})
	}
	// No relevant tool at all: every metric is 0, not NaN.
	none := []Label{{"c", 0}}
	for _, v := range []float64{RecallAtK([]string{"c"}, none, 5), AveragePrecision([]string{"c"}, none), NDCGAtK([]string{"c"}, none, 10)} {
		if v != 0 {
			t.Errorf("degenerate query: %v", v)
		}
	}
}

func TestParseGoldenSet(t *testing.T) {
	good := "queries:\n  - {id: q, query: read a file, labels: [{tool: read, relevance: 2}]}\n"
	if g, err := ParseGoldenSet([]byte(good)); err != nil || len(g.Queries) != 1 {
		t.Fatalf("good: %v %v", g, err)
	}
	// JSON is YAML.
	if _, err := ParseGoldenSet([]byte(`{"version":"v1","queries":[{"id":"q","query":"x","labels":[{"tool":"t","relevance":1}]}]}`)); err != nil {
		t.Errorf("JSON: %v", err)
	}
	bad := map[string]string{
		"":            "empty file",
		"queries: []": "no queries",
		"queris: []":  "field queris not found",
		"queries:\n  - {id: q, query: x, labels: [{tool: t, relevance: 0}]}":                                                           "no tool with relevance ≥ 1",
		"queries:\n  - {id: q, query: x, labels: [{tool: t, relevance: 7}]}":                                                           "relevance 7",
		"queries:\n  - {id: q, query: '', labels: [{tool: t, relevance: 1}]}":                                                          "empty query",
		"queries:\n  - {query: x, labels: [{tool: t, relevance: 1}]}":                                                                  "no id",
		"queries:\n  - {id: q, query: x, labels: [{tool: t, relevance: 1}, {tool: t, relevance: 2}]}":                                  "t labelled twice",
		"queries:\n  - {id: q, query: x, labels: [{tool: t, relevance: 1}]}\n  - {id: q, query: y, labels: [{tool: t, relevance: 1}]}": "id used twice",
	}
	for in, want := range bad {
		if _, err := ParseGoldenSet([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
}

func loadInventory(t *testing.T, name string) *inventory.Inventory {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "inventory", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var inv inventory.Inventory
	if err := json.Unmarshal(data, &inv); err != nil {
		t.Fatal(err)
	}
	return &inv
}

func TestTerms(t *testing.T) {
	got := Terms("readTextFile read_media_file, HTTPServer x2 déjà-vu")
	want := []string{"read", "text", "file", "read", "media", "file", "httpserver", "x2", "déjà", "vu"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestBM25OnFilesystem evaluates the BM25 baseline on the filesystem golden set (golden text).
func TestBM25OnFilesystem(t *testing.T) {
	inv := loadInventory(t, "server-filesystem")
	g, err := LoadGoldenSet(filepath.Join("testdata", "server-filesystem.golden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ix := NewBM25(inv.Tools)
	r, err := Evaluate(context.Background(), g, ix.Search, "bm25", nil)
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "server-filesystem.bm25.txt"), text.Bytes())
	// A sanity floor for the baseline: most queries find their tool first.
	if r.Metrics.MRR < 0.5 || r.Metrics.RecallAt[10] < 0.8 {
		t.Errorf("BM25 on filesystem: %s", MetricsLine(r.Metrics))
	}
	// The gate: the same report passes against itself, and a worse one fails.
	if g := Compare(r, r, "self", 0.02); !g.Passed {
		t.Errorf("self comparison failed: %+v", g)
	}
	worse, err := Evaluate(context.Background(), g, func(ctx context.Context, q string, limit int) ([]string, error) {
		ranked, _ := ix.Search(ctx, q, limit)
		if len(ranked) > 1 {
			ranked[0], ranked[len(ranked)-1] = ranked[len(ranked)-1], ranked[0]
		}
		return ranked, nil
	}, "bm25-shuffled", nil)
	if err != nil {
		t.Fatal(err)
	}
	gate := Compare(r, worse, "base.json", 0.02)
	if gate.Passed || len(gate.Regressions) == 0 || gate.Regressions[0].Metric != "recall@1" {
		t.Errorf("gate %+v", gate)
	}
}

func TestBM25Ranking(t *testing.T) {
	tools := []session.Tool{
		{Name: "get_weather", Description: "Current weather for a city."},
		{Name: "get_time", Description: "Current time in a city."},
		{Name: "send_email", Description: "Sends an email.", InputSchema: json.RawMessage(`{"properties":{"to":{"description":"recipient address"}}}`)},
	}
	ix := NewBM25(tools)
	got, _ := ix.Search(context.Background(), "what's the weather in Paris", 0)
	if len(got) == 0 || got[0] != "get_weather" {
		t.Errorf("weather: %v", got)
	}
	got, _ = ix.Search(context.Background(), "recipient", 0)
	if diff := cmp.Diff([]string{"send_email"}, got); diff != "" {
		t.Errorf("parameter description: %s", diff)
	}
	if got, _ := ix.Search(context.Background(), "zzz", 5); len(got) != 0 {
		t.Errorf("no match: %v", got)
	}
	got, _ = ix.Search(context.Background(), "current city", 1)
	if len(got) != 1 {
		t.Errorf("limit: %v", got)
	}
}

func TestRankedNames(t *testing.T) {
	cases := []struct {
		text string
		want []string
	}{
		{`{"results":[{"name":"read_file_text"},{"name":"read_file"}]}`, []string{"read_file_text", "read_file"}},
		{"1. list\n2. read_file.", []string{"list", "read_file"}},
		{"playlist and read_files are not tools", nil},
		{"call github.create_issue then list", []string{"github.create_issue", "list"}},
	}
	for _, c := range cases {
		// Longest first, as ToolSearch sorts them.
		sorted := []string{"github.create_issue", "read_file_text", "read_file", "list"}
		got := rankedNames(c.text, sorted, 10)
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", c.text, diff)
		}
	}
}

type fakeCaller struct {
	args any
	res  *session.ToolResult
	err  error
}

func (f *fakeCaller) CallTool(_ context.Context, _ string, args any, _ *session.CallOptions) (*session.ToolResult, error) {
	f.args = args
	return f.res, f.err
}

func TestToolSearch(t *testing.T) {
	f := &fakeCaller{res: &session.ToolResult{Content: []json.RawMessage{json.RawMessage(`{"type":"text","text":"b then a"}`)}}}
	search := ToolSearch(f, "search", "q", "limit", []string{"a", "b", "c"})
	got, err := search(context.Background(), "find", 5)
	if err != nil || !cmp.Equal(got, []string{"b", "a"}) {
		t.Errorf("got %v %v", got, err)
	}
	if !cmp.Equal(f.args, map[string]any{"q": "find", "limit": 5}) {
		t.Errorf("args %v", f.args)
	}
	f.res = &session.ToolResult{IsError: true, Content: []json.RawMessage{json.RawMessage(`{"type":"text","text":"boom"}`)}}
	if _, err := search(context.Background(), "x", 5); err == nil || !strings.Contains(err.Error(), "isError: boom") {
		t.Errorf("isError: %v", err)
	}
	f.err = errors.New("down")
	if _, err := search(context.Background(), "x", 5); err == nil || !strings.Contains(err.Error(), "down") {
		t.Errorf("failure: %v", err)
	}
}
