package retrieval

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/mcpspec/mcpspec/session"
)

// BM25 is an Okapi BM25 index over tool definitions: mcpspec's own search, the baseline a
// server's search tool is compared with. A tool's document is its name (split at _, -, . and
// camelCase), title, description, and its parameters' names and descriptions.
type BM25 struct {
	names []string
	docs  []map[string]int // term → frequency, per tool
	lens  []int
	avg   float64
	df    map[string]int
}

// BM25 parameters (the usual defaults).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// NewBM25 indexes tools.
func NewBM25(tools []session.Tool) *BM25 {
	ix := &BM25{df: map[string]int{}}
	total := 0
	for _, t := range tools {
		terms := Terms(toolText(t))
		tf := map[string]int{}
		for _, term := range terms {
			tf[term]++
		}
		for term := range tf {
			ix.df[term]++
		}
		ix.names = append(ix.names, t.Name)
		ix.docs = append(ix.docs, tf)
		ix.lens = append(ix.lens, len(terms))
		total += len(terms)
	}
	if len(tools) > 0 {
		ix.avg = float64(total) / float64(len(tools))
	}
	return ix
}

// toolText is the text BM25 indexes for a tool.
func toolText(t session.Tool) string {
	parts := []string{t.Name, t.Title, t.Description}
	var s struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	if json.Unmarshal(t.InputSchema, &s) == nil {
		keys := make([]string, 0, len(s.Properties))
		for k := range s.Properties {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			parts = append(parts, k, s.Properties[k].Description)
		}
	}
	return strings.Join(parts, " ")
}

// Terms splits text into lower-case terms: runs of letters and digits, with identifiers also
// split at camelCase humps ("readTextFile" gives read, text, file).
func Terms(text string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	var prev rune
	for _, r := range text {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && unicode.IsLower(prev) {
				flush()
			}
			cur = append(cur, r)
		default:
			flush()
		}
		prev = r
	}
	flush()
	return out
}

// Search ranks the tools for query, best first, at most limit of them (limit ≤ 0: all that
// match). Tools that share no term with the query are left out; ties go by name.
func (ix *BM25) Search(_ context.Context, query string, limit int) ([]string, error) {
	type hit struct {
		name  string
		score float64
	}
	n := float64(len(ix.names))
	qterms := slices.Compact(slices.Sorted(slices.Values(Terms(query))))
	var hits []hit
	for i, tf := range ix.docs {
		score := 0.0
		for _, q := range qterms {
			f := float64(tf[q])
			if f == 0 {
				continue
			}
			df := float64(ix.df[q])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			norm := 1 - bm25B + bm25B*float64(ix.lens[i])/ix.avg
			score += idf * f * (bm25K1 + 1) / (f + bm25K1*norm)
		}
		if score > 0 {
			hits = append(hits, hit{ix.names[i], score})
		}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	var out []string
	for _, h := range hits {
		if limit > 0 && len(out) == limit {
			break
		}
		out = append(out, h.name)
	}
	return out, nil
}
