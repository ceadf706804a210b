package collection

import (
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// FuzzSpec is the `fuzz:` block: the protocol fuzzer (see `mcpspec fuzz`), run by `mcpspec
// test` after the tests against one of the collection's servers; each finding is a failed
// test.
type FuzzSpec struct {
	// Server names the fuzzed server (the default server when the block names none).
	Server     string
	Iterations int
	Seed       int64
	// Time bounds the run (0: Iterations only).
	Time time.Duration
	// Payloads names case families (see [FuzzFamilies]); empty means all.
	Payloads []string
	// Strict makes accepted-invalid a finding.
	Strict bool
	// IncludeDestructive and IncludeOpenWorld also call tools annotated destructiveHint or
	// openWorldHint; Tools limits the schema cases to these tool globs, SkipTools leaves
	// these out.
	IncludeDestructive, IncludeOpenWorld bool
	Tools, SkipTools                     []string
	// HangAfter is how long a request may go unanswered (0: the fuzzer's default).
	HangAfter time.Duration
	// SaveFindings, when set, is the collection file the findings are saved to as regression
	// tests (relative to the working directory).
	SaveFindings string
	Pos          Pos
}

// DefaultFuzzIterations is a fuzz block's default iteration count.
const DefaultFuzzIterations = 100

// FuzzFamilies lists the case families a fuzz block's payloads may name.
func FuzzFamilies() []string {
	return []string{"malformed-json", "truncated", "invalid-utf8", "control-chars", "huge-frame", "deep-nesting",
		"wrong-jsonrpc", "bad-method", "bad-params", "bad-id", "batch", "notification-id", "before-initialize", "schema"}
}

// decodeFuzz reads the `fuzz:` block.
func (d *decoder) decodeFuzz(n *yaml.Node, c *Collection) *FuzzSpec {
	fs, ok := d.fields(n, "fuzz", []string{"server", "iterations", "seed", "time", "payloads", "strict",
		"includeDestructive", "includeOpenWorld", "tools", "skipTools", "hangAfter", "saveFindings"})
	if !ok {
		return nil
	}
	s := &FuzzSpec{Pos: d.pos(n), Iterations: DefaultFuzzIterations}
	if f, ok := fs["server"]; ok {
		s.Server, _ = d.str(f.val, "fuzz.server")
		if _, known := c.Servers[s.Server]; !known {
			d.errf(f.val, suggest(s.Server, sortedServerNames(c)), "fuzz.server %q is not a server of the collection", s.Server)
		}
	} else if c.DefaultServer == "" {
		d.errf(n, `add "server: NAME"`, "fuzz: the collection has several servers and no default; say which to fuzz")
	} else {
		s.Server = c.DefaultServer
	}
	if f, ok := fs["iterations"]; ok {
		v, _ := d.integer(f.val, "fuzz.iterations", 1, 10_000_000)
		s.Iterations = int(v)
	}
	if f, ok := fs["seed"]; ok {
		s.Seed, _ = d.integer(f.val, "fuzz.seed", -1<<63, 1<<63-1)
	}
	for k, p := range map[string]*time.Duration{"time": &s.Time, "hangAfter": &s.HangAfter} {
		if f, ok := fs[k]; ok {
			*p, _ = d.duration(f.val, "fuzz."+k)
		}
	}
	if f, ok := fs["payloads"]; ok {
		s.Payloads, _ = d.strList(f.val, "fuzz.payloads")
		for i, p := range s.Payloads {
			if !slices.Contains(FuzzFamilies(), p) {
				d.errf(f.val.Content[i], "use one of: "+strings.Join(FuzzFamilies(), ", "), "fuzz.payloads: unknown family %q", p)
			}
		}
	}
	for k, p := range map[string]*bool{"strict": &s.Strict, "includeDestructive": &s.IncludeDestructive, "includeOpenWorld": &s.IncludeOpenWorld} {
		if f, ok := fs[k]; ok {
			*p, _ = d.boolean(f.val, "fuzz."+k)
		}
	}
	for k, p := range map[string]*[]string{"tools": &s.Tools, "skipTools": &s.SkipTools} {
		if f, ok := fs[k]; ok {
			*p, _ = d.strList(f.val, "fuzz."+k)
		}
	}
	if f, ok := fs["saveFindings"]; ok {
		s.SaveFindings, _ = d.nonEmpty(f.val, "fuzz.saveFindings")
	}
	return s
}
