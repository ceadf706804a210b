package collection

import "testing"

func TestAnalysisBlocks(t *testing.T) {
	doc := `
servers:
  api: testserver
  other: testserver
defaults: {server: api}
tokens: {encoding: cl100k_base, budget: 4000, maxPerTool: 800}
score: {server: other, minimum: 80, golden: golden.yaml}
retrieval: {golden: golden.yaml, searchTool: search, limitArg: n, baseline: base.json, tolerance: 0.05}
`
	c, err := Parse("a.yaml", []byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Tokens; s.Encoding != "cl100k_base" || s.Budget != 4000 || s.MaxPerTool != 800 || s.Server != "" {
		t.Errorf("tokens %+v", s)
	}
	if s := c.Score; s.Server != "other" || s.Minimum != 80 || s.Golden != "golden.yaml" {
		t.Errorf("score %+v", s)
	}
	if s := c.Retrieval; s.Golden != "golden.yaml" || s.SearchTool != "search" || s.QueryArg != "query" || s.LimitArg != "n" || s.Tolerance != 0.05 {
		t.Errorf("retrieval %+v", s)
	}
	// Defaults, and no tests needed when a block is there.
	c, err = Parse("b.yaml", []byte("server: testserver\ntokens: {budget: 10}\nretrieval: {golden: g.yaml}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Tokens.Encoding != "o200k_base" || c.Retrieval.Tolerance != 0.02 || c.Retrieval.QueryArg != "query" {
		t.Errorf("defaults: %+v %+v", c.Tokens, c.Retrieval)
	}
}

func TestAnalysisBlockErrors(t *testing.T) {
	cases := []struct{ doc, want string }{
		{"server: testserver\ntokens: {encoding: p50k_base, budget: 1}", `tokens.encoding: unknown encoding "p50k_base"`},
		{"server: testserver\ntokens: {}", "tokens: no budget"},
		{"server: testserver\ntokens: {budget: 0}", "tokens.budget"},
		{"server: testserver\nscore: {golden: g.yaml}", "score: no minimum"},
		{"server: testserver\nscore: {minimum: 101}", "score.minimum"},
		{"server: testserver\nscore: {minimum: 50, server: nope}", `score.server "nope" is not a server of the collection`},
		{"server: testserver\nretrieval: {searchTool: s}", "retrieval: no golden set"},
		{"server: testserver\nretrieval: {golden: g, tolerance: 1}", "retrieval.tolerance"},
		{"server: testserver\nretrieval: {golden: g, treshold: 1}", `unknown key "treshold" in retrieval`},
		{"servers: {a: testserver, b: testserver}\nscore: {minimum: 1}", "score: the collection has several servers and no default"},
	}
	for _, c := range cases {
		_, err := Parse("x.yaml", []byte(c.doc), nil)
		wantErrors(t, err, c.want)
	}
}
