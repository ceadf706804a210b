package collection

import (
	"slices"

	"gopkg.in/yaml.v3"
)

// The blocks below gate a server's offline analyses: the context cost of its tool definitions
// (`tokens:`, package tokens), its MCP score (`score:`, package score) and how well its tools
// are found (`retrieval:`, package retrieval). They are parsed and validated with the
// collection, and the runner runs each after the tests as one test (package gates). Paths are
// relative to the working directory, like the verbs' flags.

// TokensSpec is the `tokens:` block: a budget for the tool definitions' core tokens.
type TokensSpec struct {
	// Server names the measured server ("" = the default server).
	Server string
	// Encoding is o200k_base (the default) or cl100k_base.
	Encoding string
	// Budget bounds the core tokens of all tools; MaxPerTool those of the heaviest one
	// (0 = not checked; at least one is set).
	Budget     int
	MaxPerTool int
	Pos        Pos
}

// ScoreSpec is the `score:` block: a minimum MCP score.
type ScoreSpec struct {
	Server string
	// Minimum is the lowest passing score, 0–100.
	Minimum int
	// Golden is a retrieval golden set that adds the retrieval check ("" = none).
	Golden string
	Pos    Pos
}

// RetrievalSpec is the `retrieval:` block: a golden set run through the server's search tool
// or mcpspec's BM25, gated against a baseline.
type RetrievalSpec struct {
	Server string
	// Golden is the golden set file (required).
	Golden string
	// SearchTool is the server's search tool ("" = mcpspec's BM25); QueryArg (default
	// "query") and LimitArg its arguments.
	SearchTool string
	QueryArg   string
	LimitArg   string
	// Baseline is an earlier `mcpspec retrieval --json` output to gate against ("" = none);
	// Tolerance how far a metric may fall below it (default 0.02).
	Baseline  string
	Tolerance float64
	Pos       Pos
}

// encodings are the values of tokens.encoding.
var encodings = []string{"o200k_base", "cl100k_base"}

// blockServer reads a block's `server:` key, which must name a server of the collection; without
// it the collection must have a default server.
func (d *decoder) blockServer(n *yaml.Node, fs map[string]field, block string, c *Collection) string {
	f, ok := fs["server"]
	if !ok {
		if c.DefaultServer == "" {
			d.errf(n, `add "server: NAME"`, "%s: the collection has several servers and no default; say which one", block)
		}
		return ""
	}
	name, _ := d.str(f.val, block+".server")
	if _, known := c.Servers[name]; !known {
		names := make([]string, 0, len(c.Servers))
		for k := range c.Servers {
			names = append(names, k)
		}
		slices.Sort(names)
		d.errf(f.val, suggest(name, names), "%s.server %q is not a server of the collection", block, name)
	}
	return name
}

// decodeTokens reads the `tokens:` block.
func (d *decoder) decodeTokens(n *yaml.Node, c *Collection) *TokensSpec {
	fs, ok := d.fields(n, "tokens", []string{"server", "encoding", "budget", "maxPerTool"})
	if !ok {
		return nil
	}
	s := &TokensSpec{Pos: d.pos(n), Encoding: "o200k_base", Server: d.blockServer(n, fs, "tokens", c)}
	if f, ok := fs["encoding"]; ok {
		if v, ok := d.str(f.val, "tokens.encoding"); ok {
			if !has(encodings, v) {
				d.errf(f.val, suggest(v, encodings), "tokens.encoding: unknown encoding %q", v)
			}
			s.Encoding = v
		}
	}
	if f, ok := fs["budget"]; ok {
		v, _ := d.integer(f.val, "tokens.budget", 1, 10_000_000)
		s.Budget = int(v)
	}
	if f, ok := fs["maxPerTool"]; ok {
		v, _ := d.integer(f.val, "tokens.maxPerTool", 1, 10_000_000)
		s.MaxPerTool = int(v)
	}
	if fs["budget"].val == nil && fs["maxPerTool"].val == nil {
		d.errf(n, `add "budget: N" (core tokens of all tools) or "maxPerTool: N"`, "tokens: no budget")
	}
	return s
}

// decodeScore reads the `score:` block.
func (d *decoder) decodeScore(n *yaml.Node, c *Collection) *ScoreSpec {
	fs, ok := d.fields(n, "score", []string{"server", "minimum", "golden"})
	if !ok {
		return nil
	}
	s := &ScoreSpec{Pos: d.pos(n), Server: d.blockServer(n, fs, "score", c)}
	if f, ok := fs["minimum"]; ok {
		v, _ := d.integer(f.val, "score.minimum", 0, 100)
		s.Minimum = int(v)
	} else {
		d.errf(n, `add "minimum: N" (0–100)`, "score: no minimum")
	}
	if f, ok := fs["golden"]; ok {
		s.Golden, _ = d.str(f.val, "score.golden")
	}
	return s
}

// decodeRetrieval reads the `retrieval:` block.
func (d *decoder) decodeRetrieval(n *yaml.Node, c *Collection) *RetrievalSpec {
	fs, ok := d.fields(n, "retrieval", []string{"server", "golden", "searchTool", "queryArg", "limitArg", "baseline", "tolerance"})
	if !ok {
		return nil
	}
	s := &RetrievalSpec{Pos: d.pos(n), QueryArg: "query", Tolerance: 0.02, Server: d.blockServer(n, fs, "retrieval", c)}
	if f, ok := fs["golden"]; ok {
		s.Golden, _ = d.str(f.val, "retrieval.golden")
	} else {
		d.errf(n, `add "golden: FILE" (queries with their relevant tools)`, "retrieval: no golden set")
	}
	strs := map[string]*string{"searchTool": &s.SearchTool, "queryArg": &s.QueryArg, "limitArg": &s.LimitArg, "baseline": &s.Baseline}
	for k, p := range strs {
		if f, ok := fs[k]; ok {
			*p, _ = d.str(f.val, "retrieval."+k)
		}
	}
	if f, ok := fs["tolerance"]; ok {
		s.Tolerance, _ = d.number(f.val, "retrieval.tolerance", 0, 0.999)
	}
	return s
}
