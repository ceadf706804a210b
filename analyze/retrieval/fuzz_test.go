package retrieval

import (
	"context"
	"testing"

	"github.com/mcpspec/mcpspec/session"
)

// FuzzParseGoldenSet: no input makes the parser panic, and what it accepts is valid and can be
// evaluated.
func FuzzParseGoldenSet(f *testing.F) {
	for _, s := range []string{
		"queries:\n  - {id: q, query: x, labels: [{tool: t, relevance: 2}]}\n",
		`{"queries":[{"id":"q","query":"x","labels":[{"tool":"t","relevance":1}]}]}`,
		"queries: [", "", "- 1", "queries:\n  - id: &a q\n    query: *a\n",
	} {
		f.Add([]byte(s))
	}
	ix := NewBM25([]session.Tool{{Name: "t", Description: "x y"}})
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := ParseGoldenSet(data)
		if err != nil {
			return
		}
		r, err := Evaluate(context.Background(), g, ix.Search, "bm25", nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []float64{r.Metrics.MRR, r.Metrics.MAP, r.Metrics.NDCGAt10} {
			if v < 0 || v > 1 || v != v {
				t.Fatalf("metric out of range: %v", v)
			}
		}
	})
}
