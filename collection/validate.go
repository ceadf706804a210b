package collection

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"
)

// validate checks what needs the whole collection: ids, dependencies, servers, timeouts and
// variables. It fills derived fields (Timeout, Server, Requires).
func (d *decoder) validate(c *Collection, base *Vars, lookupEnv func(string) (string, bool)) {
	ids := map[string]*Test{}
	explicit := map[*Test]bool{}
	for _, t := range c.Tests {
		explicit[t] = t.idGiven
	}
	// Explicit ids first, so a derived id yields to an explicit one.
	for _, t := range c.Tests {
		if !explicit[t] || t.ID == "" {
			continue
		}
		if prev, dup := ids[t.ID]; dup {
			d.errs = append(d.errs, &Error{Pos: t.Pos, Msg: fmt.Sprintf("duplicate test id %q (first at line %d)", t.ID, prev.Pos.Line)})
			continue
		}
		ids[t.ID] = t
	}
	for _, t := range c.Tests {
		if explicit[t] || t.ID == "" {
			continue
		}
		base := t.ID
		for i := 2; ids[t.ID] != nil; i++ {
			t.ID = fmt.Sprintf("%s-%d", base, i)
		}
		ids[t.ID] = t
	}
	allIDs := slices.Sorted(maps.Keys(ids))
	// Two tests of one name are told apart only by their ids; a derived id ("name-2") moves
	// when tests are reordered, so baselines and reports would mix them up.
	byName := map[string]*Test{}
	for _, t := range c.Tests {
		if t.Name == "" {
			continue
		}
		if prev, dup := byName[t.Name]; dup && !(t.idGiven && prev.idGiven) {
			d.errs = append(d.errs, &Error{Pos: t.Pos, Hint: "give each test a distinct name, or both an explicit id",
				Msg: fmt.Sprintf("duplicate test name %q (first at line %d)", t.Name, prev.Pos.Line)})
			continue
		}
		byName[t.Name] = t
	}

	callTimeouts := map[string]time.Duration{}
	for name, s := range c.Servers {
		callTimeouts[name] = s.Timeouts.Call
	}
	if c.Defaults.Timeout > 0 {
		for name, call := range callTimeouts {
			if call >= c.Defaults.Timeout {
				d.errs = append(d.errs, &Error{Pos: c.Servers[name].Pos, Hint: "inner timeouts must be below the test timeout",
					Msg: fmt.Sprintf("server %q call timeout %s is not below defaults.timeout %s", name, call, c.Defaults.Timeout)})
			}
		}
	}

	for _, t := range c.Tests {
		if t.Server == "" {
			t.Server = c.DefaultServer
			if t.Server == "" && len(c.Servers) > 1 {
				d.errs = append(d.errs, &Error{Pos: t.Pos, Hint: `add "server:" or set defaults.server`,
					Msg: fmt.Sprintf("test %q names no server and the collection has several", t.ID)})
			}
		}
		if t.Timeout == 0 {
			t.Timeout = c.Defaults.Timeout
		}
		if t.Timeout == 0 {
			t.Timeout = DefaultTestTimeout
		}
		for _, a := range t.Assertions {
			if a.Spec.Type == "latency" && a.Spec.Max >= t.Timeout {
				d.errs = append(d.errs, &Error{Pos: a.Pos, Hint: "inner bounds must be below the test timeout",
					Msg: fmt.Sprintf("test %q: latency bound %s is not below the test timeout %s", t.ID, a.Spec.Max, t.Timeout)})
			}
		}
		for _, dep := range t.DependsOn {
			switch {
			case dep == t.ID:
				d.errs = append(d.errs, &Error{Pos: t.Pos, Msg: fmt.Sprintf("test %q depends on itself", t.ID)})
			case ids[dep] == nil:
				d.errs = append(d.errs, &Error{Pos: t.Pos, Hint: suggest(dep, allIDs),
					Msg: fmt.Sprintf("test %q depends on unknown test %q", t.ID, dep)})
			}
		}
	}

	d.checkVariables(c, base, lookupEnv, ids)
	d.checkCycles(c, ids)

	d.checkBlockServers(c)
	if c.Load != nil {
		for _, m := range c.Load.Mix {
			if m.Test != "" && ids[m.Test] == nil {
				d.errs = append(d.errs, &Error{Pos: m.Pos, Hint: suggest(m.Test, allIDs), Msg: fmt.Sprintf("load.mix: unknown test %q", m.Test)})
			}
		}
	}
}

// checkVariables checks every reference and records which tests provide extracted values.
func (d *decoder) checkVariables(c *Collection, base *Vars, lookupEnv func(string) (string, bool), ids map[string]*Test) {
	// extractors[name] lists the test indexes extracting name, in file order.
	extractors := map[string][]int{}
	for i, t := range c.Tests {
		for _, e := range t.Extract {
			extractors[e.Name] = append(extractors[e.Name], i)
		}
	}
	deps := func(t *Test) map[string]bool {
		seen := map[string]bool{}
		var walk func(*Test)
		walk = func(t *Test) {
			for _, id := range append(append([]string(nil), t.DependsOn...), t.Requires...) {
				if seen[id] || ids[id] == nil {
					continue
				}
				seen[id] = true
				walk(ids[id])
			}
		}
		walk(t)
		return seen
	}
	for _, r := range d.refs {
		name := r.name
		switch {
		case strings.HasPrefix(name, envPrefix), strings.HasPrefix(name, secretPrefix):
			env := name[strings.Index(name, ".")+1:]
			if env == "" {
				d.errs = append(d.errs, &Error{Pos: r.pos, Msg: fmt.Sprintf("{{%s}} names no variable", name)})
			} else if _, ok := lookupEnv(env); !ok {
				d.errs = append(d.errs, &Error{Pos: r.pos, Hint: "export it, or pass it with --env-file",
					Msg: fmt.Sprintf("environment variable %s is not set (referenced as {{%s}})", env, name)})
			}
			continue
		case r.test < 0 && base.has(name):
			continue
		}
		if r.test < 0 {
			d.errs = append(d.errs, &Error{Pos: r.pos, Hint: d.varHint(name, base, c),
				Msg: fmt.Sprintf("undefined variable %q", name)})
			continue
		}
		t := c.Tests[r.test]
		provider := -1
		reachable := deps(t)
		for _, idx := range extractors[name] {
			if idx == r.test {
				continue
			}
			if reachable[c.Tests[idx].ID] || idx < r.test {
				provider = idx
			}
		}
		if provider < 0 && base.has(name) {
			continue
		}
		if provider < 0 {
			hint := d.varHint(name, base, c)
			if len(extractors[name]) > 0 {
				hint = fmt.Sprintf("%q is extracted by test %q, which does not run before this one; add it to dependsOn",
					name, c.Tests[extractors[name][0]].ID)
			}
			d.errs = append(d.errs, &Error{Pos: r.pos, Hint: hint,
				Msg: fmt.Sprintf("undefined variable %q in test %q", name, t.ID)})
			continue
		}
		pid := c.Tests[provider].ID
		if !has(t.Requires, pid) && !has(t.DependsOn, pid) {
			t.Requires = append(t.Requires, pid)
		}
	}
	for _, t := range c.Tests {
		for _, dep := range t.DependsOn {
			if !has(t.Requires, dep) && ids[dep] != nil && dep != t.ID {
				t.Requires = append(t.Requires, dep)
			}
		}
		sort.Strings(t.Requires)
	}
}

// varHint suggests a close variable name, or where variables come from.
func (d *decoder) varHint(name string, base *Vars, c *Collection) string {
	var known []string
	for k := range base.Values() {
		known = append(known, k)
	}
	for _, t := range c.Tests {
		for _, e := range t.Extract {
			known = append(known, e.Name)
		}
	}
	sort.Strings(known)
	if h := suggest(name, known); h != "" {
		return h
	}
	return "define it in variables, an environment, --var or --env-file, or extract it in an earlier test"
}

// checkCycles reports dependency cycles (dependsOn plus implicit extract requirements).
func (d *decoder) checkCycles(c *Collection, ids map[string]*Test) {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	reported := map[string]bool{}
	var visit func(t *Test)
	visit = func(t *Test) {
		color[t.ID] = grey
		stack = append(stack, t.ID)
		for _, dep := range t.Requires {
			next := ids[dep]
			if next == nil || dep == t.ID {
				continue
			}
			switch color[dep] {
			case white:
				visit(next)
			case grey:
				i := len(stack) - 1
				for i >= 0 && stack[i] != dep {
					i--
				}
				cycle := append(append([]string(nil), stack[i:]...), dep)
				key := strings.Join(cycle, " → ")
				if !reported[dep] {
					reported[dep] = true
					d.errs = append(d.errs, &Error{Pos: next.Pos, Msg: "dependency cycle: " + key})
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[t.ID] = black
	}
	for _, t := range c.Tests {
		if color[t.ID] == white {
			visit(t)
		}
	}
}

// checkBlockServers resolves the server of each detector block: the one it names, which must
// exist, else the default server, which must be decidable.
func (d *decoder) checkBlockServers(c *Collection) {
	names := slices.Sorted(maps.Keys(c.Servers))
	check := func(block string, server *string, pos Pos) {
		switch {
		case *server != "" && c.Servers[*server] == nil:
			d.errs = append(d.errs, &Error{Pos: pos, Hint: suggest(*server, names), Msg: fmt.Sprintf("%s: unknown server %q", block, *server)})
		case *server == "" && c.DefaultServer == "":
			if len(c.Servers) > 0 {
				d.errs = append(d.errs, &Error{Pos: pos, Hint: `add "server:" to the block or set defaults.server`,
					Msg: fmt.Sprintf("%s names no server and the collection has several", block)})
			}
		case *server == "":
			*server = c.DefaultServer
		}
	}
	if b := c.Deadlock; b != nil {
		check("deadlock", &b.Server, b.Pos)
	}
	if b := c.Race; b != nil {
		check("race", &b.Server, b.Pos)
	}
	if b := c.HeadOfLine; b != nil {
		check("head-of-line", &b.Server, b.Pos)
	}
}
