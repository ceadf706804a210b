package gates

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpspec/mcpspec/analyze/audit"
	"github.com/mcpspec/mcpspec/analyze/inventory"
	"github.com/mcpspec/mcpspec/analyze/retrieval"
	"github.com/mcpspec/mcpspec/analyze/score"
	"github.com/mcpspec/mcpspec/analyze/tokens"
	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/internal/regfile"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/session"
)

// newTest starts the result of a block's test.
func newTest(id, server string) *result.Test {
	return &result.Test{ID: id, Name: id + " " + server, Server: server, Kind: id, Status: result.Passed, Attempts: []result.Attempt{}}
}

// finish closes t: its duration, and one attempt carrying its verdict.
func finish(t *result.Test, started time.Time) *result.Test {
	t.Duration = time.Since(started)
	if len(t.Failures) > 0 && t.Status == result.Passed {
		t.Status = result.Failed
	}
	t.Attempts = []result.Attempt{{Status: t.Status, Duration: t.Duration, Failures: t.Failures, Error: t.Error}}
	return t
}

// errored marks t as errored by err: a session failure keeps its category.
func errored(t *result.Test, what string, err error) {
	t.Status = result.Errored
	e := &result.Error{Category: result.ServerError, Message: what + ": " + err.Error()}
	var se *session.Error
	if errors.As(err, &se) {
		e.Category, e.Code, e.Hint = se.Category, se.Code, se.Hint
	}
	t.Error = e
}

// Tokens measures the tool definitions of s's server against spec's budget (core tokens of
// all tools) and per-tool maximum.
func Tokens(ctx context.Context, s *session.Session, server string, spec *collection.TokensSpec) *result.Test {
	started := time.Now()
	t := newTest("tokens", server)
	inv, err := inventory.Collect(ctx, s)
	if err != nil {
		errored(t, "list the server's tools", err)
		return finish(t, started)
	}
	c, err := tokens.NewCounter(tokens.Encoding(spec.Encoding))
	if err != nil {
		errored(t, "tokens", err)
		return finish(t, started)
	}
	r, err := tokens.Measure(c, inv.Tools)
	if err != nil {
		errored(t, "measure", err)
		return finish(t, started)
	}
	t.Target = fmt.Sprintf("%d tools, core %d %s tokens", len(r.Tools), r.Total.Core, r.Encoding)
	if spec.Budget > 0 && r.Total.Core > spec.Budget {
		t.Failures = append(t.Failures, result.Failure{Assertion: "tokens.budget", Expected: fmt.Sprintf("≤ %d", spec.Budget), Actual: fmt.Sprint(r.Total.Core),
			Message: fmt.Sprintf("the tools' core definitions take %d %s tokens, over the budget of %d", r.Total.Core, r.Encoding, spec.Budget), Line: spec.Pos.Line})
	}
	if spec.MaxPerTool > 0 {
		for _, tc := range r.Tools {
			if tc.Core > spec.MaxPerTool {
				t.Failures = append(t.Failures, result.Failure{Assertion: "tokens.maxPerTool", Path: tc.Tool, Expected: fmt.Sprintf("≤ %d", spec.MaxPerTool), Actual: fmt.Sprint(tc.Core),
					Message: fmt.Sprintf("tool %s takes %d core tokens, over the maximum of %d", tc.Tool, tc.Core, spec.MaxPerTool), Line: spec.Pos.Line})
			}
		}
	}
	return finish(t, started)
}

// Score rates s's server with the rubric and fails below spec's minimum. Security is the
// passive audit of what the server lists, with the committed suppressions
// ([SuppressionsPath], when it exists).
func Score(ctx context.Context, s *session.Session, server string, spec *collection.ScoreSpec) *result.Test {
	started := time.Now()
	t := newTest("score", server)
	inv, err := inventory.Collect(ctx, s)
	if err != nil {
		errored(t, "list what the server offers", err)
		return finish(t, started)
	}
	in := &score.Input{Inventory: inv}
	c, err := tokens.NewCounter(tokens.O200kBase)
	if err == nil {
		in.Tokens, err = tokens.Measure(c, inv.Tools)
	}
	if err != nil {
		errored(t, "measure tokens", err)
		return finish(t, started)
	}
	if spec.Golden != "" {
		g, err := retrieval.LoadGoldenSet(spec.Golden)
		if err != nil {
			errored(t, "score.golden", err)
			return finish(t, started)
		}
		if in.Retrieval, err = retrieval.Evaluate(ctx, g, retrieval.NewBM25(inv.Tools).Search, "bm25", nil); err != nil {
			errored(t, "retrieval", err)
			return finish(t, started)
		}
	}
	sec, err := auditInventory(ctx, inv)
	if err != nil {
		errored(t, "audit suppressions", err)
		return finish(t, started)
	}
	in.Security = sec
	in.Probes = score.Probe(ctx, s, inv)
	r := score.Rate(in)
	t.Target = fmt.Sprintf("MCP score %s", score.BadgeText(r))
	if r.Score < spec.Minimum {
		msg := fmt.Sprintf("MCP score %d is below the minimum %d", r.Score, spec.Minimum)
		if lost := mostLost(r); lost != "" {
			msg += "; most points lost: " + lost
		}
		t.Failures = append(t.Failures, result.Failure{Assertion: "score.minimum", Expected: fmt.Sprintf("≥ %d", spec.Minimum), Actual: fmt.Sprint(r.Score), Message: msg, Line: spec.Pos.Line})
	}
	return finish(t, started)
}

// SuppressionsPath is the committed suppressions file the score's audit reads when it exists.
const SuppressionsPath = audit.DefaultSuppressionsPath

// auditInventory runs the passive audit over inv with the committed suppressions.
func auditInventory(ctx context.Context, inv *inventory.Inventory) (*score.SecurityInput, error) {
	sups, err := audit.LoadSuppressions("")
	if err != nil {
		return nil, err
	}
	return score.Audit(ctx, inv, &audit.Options{Suppressions: sups})
}

// mostLost names the three checks that lost the most points.
func mostLost(r *score.Result) string {
	type lost struct {
		id string
		n  float64
	}
	var ls []lost
	for _, c := range r.Checks {
		if c.Applies && c.Possible-c.Earned > 0.005 {
			ls = append(ls, lost{c.ID, c.Possible - c.Earned})
		}
	}
	for i := 1; i < len(ls); i++ {
		for j := i; j > 0 && ls[j].n > ls[j-1].n; j-- {
			ls[j], ls[j-1] = ls[j-1], ls[j]
		}
	}
	out := ""
	for i := 0; i < len(ls) && i < 3; i++ {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%s −%.2f", ls[i].id, ls[i].n)
	}
	return out
}

// Retrieval runs spec's golden set through the server's search tool (or mcpspec's BM25) and
// fails when a metric fell below the baseline by more than the tolerance.
func Retrieval(ctx context.Context, s *session.Session, server string, spec *collection.RetrievalSpec) *result.Test {
	started := time.Now()
	t := newTest("retrieval", server)
	g, err := retrieval.LoadGoldenSet(spec.Golden)
	if err != nil {
		errored(t, "retrieval.golden", err)
		return finish(t, started)
	}
	var base *retrieval.Report
	if spec.Baseline != "" {
		data, err := regfile.ReadFile(spec.Baseline, retrieval.MaxReportBytes)
		if err == nil {
			base = &retrieval.Report{}
			err = json.Unmarshal(data, base)
		}
		if err != nil {
			errored(t, "retrieval.baseline", err)
			return finish(t, started)
		}
	}
	inv, err := inventory.Collect(ctx, s)
	if err != nil {
		errored(t, "list the server's tools", err)
		return finish(t, started)
	}
	search, label := retrieval.NewBM25(inv.Tools).Search, "bm25"
	if spec.SearchTool != "" {
		var names []string
		for _, tl := range inv.Tools {
			names = append(names, tl.Name)
		}
		search, label = retrieval.ToolSearch(s, spec.SearchTool, spec.QueryArg, spec.LimitArg, names), "tool:"+spec.SearchTool
	}
	r, err := retrieval.Evaluate(ctx, g, search, label, nil)
	if err != nil {
		errored(t, "retrieval", err)
		return finish(t, started)
	}
	t.Target = retrieval.MetricsLine(r.Metrics)
	if base != nil {
		gate := retrieval.Compare(base, r, spec.Baseline, spec.Tolerance)
		for _, c := range gate.Regressions {
			t.Failures = append(t.Failures, result.Failure{Assertion: "retrieval.baseline", Path: c.Metric,
				Expected: fmt.Sprintf("≥ %.4f", c.Baseline-spec.Tolerance), Actual: fmt.Sprintf("%.4f", c.Current),
				Message: fmt.Sprintf("%s fell from %.4f to %.4f (tolerance %v)", c.Metric, c.Baseline, c.Current, spec.Tolerance), Line: spec.Pos.Line})
		}
	}
	return finish(t, started)
}
