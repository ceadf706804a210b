package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/runner"
)

// planJSON is `mcpspec test --dry-run --json`: the runner's plan, with the load blocks the CLI
// runs after it.
type planJSON struct {
	DryRun bool `json:"dryRun"`
	*runner.Plan
}

// printPlan prints what the run would do — servers, tests in order, dependencies, blocks —
// without starting or connecting anything (--dry-run).
func (a *app) printPlan(cfg *testConfig, cols []*collection.Collection) error {
	plan := runner.New(&cfg.ropts).Plan(cols)
	for i, cp := range plan.Collections {
		if cols[i].Load != nil && !cfg.skipLoad {
			cp.Blocks = append(cp.Blocks, runner.PlannedBlock{Kind: "load", Server: cols[i].DefaultServer})
		}
	}
	if cfg.json {
		return writeJSON(a.io.Stdout, planJSON{DryRun: true, Plan: plan})
	}
	return writePlan(a.io.Stdout, plan)
}

// writePlan writes the plan for a person.
func writePlan(w io.Writer, plan *runner.Plan) error {
	var b strings.Builder
	b.WriteString("Plan (dry run: nothing was started or connected)\n")
	tests, skipped, servers := 0, 0, 0
	for _, cp := range plan.Collections {
		fmt.Fprintf(&b, "\n%s", cp.Name)
		var about []string
		if cp.File != "" {
			about = append(about, cp.File)
		}
		if cp.Environment != "" {
			about = append(about, "environment "+cp.Environment)
		}
		if len(about) > 0 {
			fmt.Fprintf(&b, "  (%s)", strings.Join(about, ", "))
		}
		b.WriteString("\n  servers:\n")
		rows := [][]string{}
		for _, s := range cp.Servers {
			what := s.Description
			if s.Error != "" {
				what = "cannot be reached as defined: " + s.Error
			}
			use := "not used"
			if s.Used {
				use = "used"
				servers++
			}
			pv := "protocol: detected"
			if s.ProtocolVersion != "" {
				pv = "protocol " + s.ProtocolVersion
			}
			rows = append(rows, []string{"    " + s.Name, what, pv, use})
		}
		if err := table(&b, rows); err != nil {
			return err
		}
		b.WriteString("  tests, in run order:\n")
		rows = rows[:0]
		for _, t := range cp.Tests {
			n := "-"
			if t.Order > 0 {
				n = fmt.Sprint(t.Order)
				tests++
			} else {
				skipped++
			}
			step := strings.TrimSpace(t.Kind + " " + t.Target)
			var notes []string
			if deps := mergeDeps(t.DependsOn, t.Requires); len(deps) > 0 {
				notes = append(notes, "after "+strings.Join(deps, ", "))
			}
			if t.Skip != "" {
				notes = append(notes, "skipped: "+t.Skip)
			}
			rows = append(rows, []string{"    " + n, t.ID, truncate(step, 50), "on " + t.Server, strings.Join(notes, "; ")})
		}
		if len(cp.Tests) == 0 {
			b.WriteString("    (none)\n")
		} else if err := table(&b, rows); err != nil {
			return err
		}
		if len(cp.Blocks) > 0 {
			var bs []string
			for _, bl := range cp.Blocks {
				bs = append(bs, bl.Kind+" on "+bl.Server)
			}
			fmt.Fprintf(&b, "  then: %s\n", strings.Join(bs, ", "))
		}
		if cp.Unselected > 0 {
			fmt.Fprintf(&b, "  left out by --tag/--grep: %s\n", textfmt.Plural(cp.Unselected, "test"))
		}
	}
	fmt.Fprintf(&b, "\n%s, %s to run, %d skipped; %s to start or connect.\n",
		textfmt.Plural(len(plan.Collections), "collection"), textfmt.Plural(tests, "test"), skipped, textfmt.Plural(servers, "server"))
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}

// mergeDeps lists the written dependencies, then the extract providers not among them.
func mergeDeps(dependsOn, requires []string) []string {
	out := append([]string(nil), dependsOn...)
	for _, r := range requires {
		found := false
		for _, d := range out {
			found = found || d == r
		}
		if !found {
			out = append(out, r)
		}
	}
	return out
}
