package runner

import (
	"maps"
	"slices"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// Plan is what [Runner.Run] would do with some collections, worked out without starting or
// connecting anything: per collection, its servers as their variables resolve them, the
// selected tests in the order they would start (one at a time, every test passing), and the
// blocks that would run after them. Secrets are masked.
type Plan struct {
	Collections []*CollectionPlan `json:"collections"`
}

// CollectionPlan is the plan of one collection.
type CollectionPlan struct {
	Name        string `json:"name"`
	File        string `json:"file,omitempty"`
	Environment string `json:"environment,omitempty"`
	// Servers are every server of the collection, by name.
	Servers []PlannedServer `json:"servers"`
	// Tests are the selected tests in start order (skipped ones where they settle).
	Tests []PlannedTest `json:"tests"`
	// Blocks are the detector blocks, the audit and the gates that run after the tests.
	Blocks []PlannedBlock `json:"blocks,omitempty"`
	// Unselected counts the tests --tag and --grep leave out.
	Unselected int `json:"unselected,omitempty"`
}

// PlannedServer is one server as it would be reached.
type PlannedServer struct {
	Name string `json:"name"`
	// Transport is stdio, http (Streamable HTTP, falling back to HTTP+SSE), sse, ws or tcp.
	Transport string `json:"transport"`
	// Target is the SPEC that reaches it: a command line or a URL.
	Target string `json:"target"`
	// Description says it in words ("stdio: built-in reference server (…)").
	Description string `json:"description,omitempty"`
	// ProtocolVersion is the pinned version, "" when the era is detected.
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// Used is set when a selected test or a block uses the server (only those are started).
	Used bool `json:"used"`
	// Error says why the server cannot be reached as defined (a variable, a bad SPEC).
	Error string `json:"error,omitempty"`
}

// PlannedTest is one selected test.
type PlannedTest struct {
	// Order is the test's place in the start order, from 1; 0 for a skipped test.
	Order  int    `json:"order,omitempty"`
	ID     string `json:"id"`
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Target string `json:"target,omitempty"`
	Server string `json:"server"`
	// DependsOn are the written dependencies; Requires the tests whose extracted variables the
	// test uses.
	DependsOn []string `json:"dependsOn,omitempty"`
	Requires  []string `json:"requires,omitempty"`
	// Skip is why the test would be skipped.
	Skip string `json:"skip,omitempty"`
}

// PlannedBlock is one block run after the tests.
type PlannedBlock struct {
	// Kind is deadlock, race, head-of-line, audit, tokens, score or retrieval.
	Kind   string `json:"kind"`
	Server string `json:"server,omitempty"`
}

// Plan works out what a run of cols would do (see [Plan]); it connects to nothing.
func (r *Runner) Plan(cols []*collection.Collection) *Plan {
	p := &Plan{Collections: []*CollectionPlan{}}
	for _, col := range cols {
		if col == nil {
			continue
		}
		cr := r.newColRun(col, nil, &events{r: r}, &runState{})
		p.Collections = append(p.Collections, cr.planned())
	}
	return p
}

// planned is the plan of the colRun's collection.
func (cr *colRun) planned() *CollectionPlan {
	col := cr.col
	nodes := cr.plan()
	cp := &CollectionPlan{Name: col.Name, File: col.File, Environment: col.Environment,
		Servers: []PlannedServer{}, Tests: []PlannedTest{}, Unselected: len(col.Tests) - len(nodes)}
	used := map[string]bool{}
	order := 0
	for _, i := range startOrder(nodes) {
		n := nodes[i]
		pt := PlannedTest{ID: n.t.ID, Name: n.t.Name, Kind: n.rt.Kind, Target: n.rt.Target, Server: n.t.Server,
			DependsOn: n.t.DependsOn, Requires: n.t.Requires, Skip: n.t.Skip}
		if pt.Skip == "" {
			used[n.t.Server] = true
			order++
			pt.Order = order
		}
		cp.Tests = append(cp.Tests, pt)
	}
	orDefault := func(s string) string {
		if s == "" {
			return col.DefaultServer
		}
		return s
	}
	for _, b := range cr.blocks() {
		cp.Blocks = append(cp.Blocks, PlannedBlock{Kind: b.kind, Server: orDefault(b.server)})
	}
	if col.Audit != nil {
		cp.Blocks = append(cp.Blocks, PlannedBlock{Kind: "audit", Server: orDefault(col.Audit.Server)})
	}
	if col.Tokens != nil {
		cp.Blocks = append(cp.Blocks, PlannedBlock{Kind: "tokens", Server: orDefault(col.Tokens.Server)})
	}
	if col.Score != nil {
		cp.Blocks = append(cp.Blocks, PlannedBlock{Kind: "score", Server: orDefault(col.Score.Server)})
	}
	if col.Retrieval != nil {
		cp.Blocks = append(cp.Blocks, PlannedBlock{Kind: "retrieval", Server: orDefault(col.Retrieval.Server)})
	}
	for _, b := range cp.Blocks {
		used[b.Server] = true
	}
	for _, name := range slices.Sorted(maps.Keys(col.Servers)) {
		cp.Servers = append(cp.Servers, cr.plannedServer(name, col.Servers[name], used[name]))
	}
	return cp
}

// plannedServer resolves one server's variables and SPEC.
func (cr *colRun) plannedServer(name string, def *collection.Server, used bool) PlannedServer {
	ps := PlannedServer{Name: name, Transport: def.Transport, Used: used,
		ProtocolVersion: orString(def.ProtocolVersion, cr.r.opts.ProtocolVersion)}
	srv, err := expandServer(def, cr.vars)
	if err != nil {
		ps.Error = cr.mask(err.Error())
		return ps
	}
	target, so := ServerSpec(srv)
	ps.Target = cr.mask(target)
	ps.Transport = srv.Transport
	info, err := spec.Resolve(target, so)
	if err != nil {
		ps.Error = cr.mask(err.Error())
		return ps
	}
	ps.Description = cr.mask(info.String())
	return ps
}

// startOrder simulates the scheduler one test at a time, every test passing: the indexes of
// nodes in the order they start (skipped tests where the scheduler settles them); a test left
// in a dependency cycle comes last.
func startOrder(nodes []*node) []int {
	done := make([]bool, len(nodes))
	started := make([]bool, len(nodes))
	var order []int
	for len(order) < len(nodes) {
		running := -1
		for progress := true; progress; {
			progress = false
			for i, n := range nodes {
				if started[i] {
					continue
				}
				if n.t.Skip != "" {
					started[i], done[i], progress = true, true, true
					order = append(order, i)
					continue
				}
				if running >= 0 || slices.ContainsFunc(n.deps, func(d int) bool { return !done[d] }) {
					continue
				}
				started[i], progress, running = true, true, i
				order = append(order, i)
			}
		}
		if running < 0 {
			for i := range nodes {
				if !started[i] {
					started[i] = true
					order = append(order, i)
				}
			}
			break
		}
		done[running] = true
	}
	return order
}
