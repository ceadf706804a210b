package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/reporters"
	"github.com/mcpspec/mcpspec/result"
)

// loadResult turns a load run into the result model the reporters read: one collection whose
// test cases are the thresholds (and, for a collection workload, each test's assertions under
// load), so JUnit, TAP, JSON and Markdown carry a load run's verdict.
func loadResult(run *metrics.Run) *result.Run {
	dur := time.Duration(run.DurationSecs * float64(time.Second))
	col := &result.Collection{
		Name:      fmt.Sprintf("load %s (%s model) against %s", run.Scenario.Kind, run.Scenario.Model, run.Server.Spec),
		StartedAt: run.StartedAt, Duration: dur,
		Servers: []result.Server{{Name: "default", Transport: run.Server.Transport, Target: run.Server.Spec,
			ProtocolVersion: run.Server.ProtocolVersion, ServerName: run.Server.Name, ServerVersion: run.Server.Version}},
	}
	lat := time.Duration(run.Latency.P99 * float64(time.Millisecond))
	for i, th := range run.Thresholds {
		name := "threshold " + th.Metric + th.Expected
		if th.Scope != "" {
			name = "threshold " + th.Metric + ":" + th.Scope + th.Expected
		}
		t := &result.Test{ID: fmt.Sprintf("threshold-%d", i+1), Name: name, Kind: "threshold", Target: th.Metric,
			Status: result.Passed, Duration: dur, Latency: lat}
		if !th.Passed {
			t.Status = result.Failed
			t.Failures = []result.Failure{{Assertion: "threshold", Path: th.Metric, Expected: th.Expected, Actual: th.Actual,
				Message: fmt.Sprintf("%s: expected %s, got %s", th.Metric, th.Expected, th.Actual)}}
		}
		t.Attempts = []result.Attempt{{Status: t.Status, Duration: dur, Latency: lat, Failures: t.Failures}}
		col.Tests = append(col.Tests, t)
	}
	for _, g := range run.Gates {
		if g.Count == 0 || g.Off || g.OverriddenBy != "" {
			continue
		}
		t := &result.Test{ID: "gate-" + g.Name, Name: "gate " + g.Name, Kind: "gate", Target: g.Name,
			Status: result.Failed, Duration: dur, Latency: lat,
			Failures: []result.Failure{{Assertion: "gate", Path: g.Name, Expected: "0", Actual: fmt.Sprint(g.Count), Message: g.Detail}}}
		t.Attempts = []result.Attempt{{Status: t.Status, Duration: dur, Latency: lat, Failures: t.Failures}}
		col.Tests = append(col.Tests, t)
	}
	for _, op := range run.PerOp {
		if op.Kind != metrics.KindTest {
			continue
		}
		t := &result.Test{ID: "load-" + op.Name, Name: "under load: " + op.Name, Kind: "load", Target: op.Name,
			Status: result.Passed, Duration: dur, Latency: time.Duration(op.Latency.P99 * float64(time.Millisecond))}
		if op.AssertionFailures > 0 || op.Errors > 0 {
			t.Status = result.Failed
			msg := fmt.Sprintf("%d of %d requests failed their assertions, %d errored", op.AssertionFailures, op.Requests, op.Errors)
			if op.FirstFailure != "" {
				msg += "; first: " + op.FirstFailure
			}
			t.Failures = []result.Failure{{Assertion: "load", Expected: "0 failures", Actual: fmt.Sprint(op.AssertionFailures + op.Errors), Message: msg}}
		}
		t.Attempts = []result.Attempt{{Status: t.Status, Duration: dur, Latency: t.Latency, Failures: t.Failures}}
		col.Tests = append(col.Tests, t)
	}
	if len(col.Tests) == 0 {
		t := &result.Test{ID: "load-run", Name: fmt.Sprintf("load run: %d requests, p99 %s, %.2f%% errors", run.Throughput.TotalRequests, msText(run.Latency.P99), run.Errors.Rate*100),
			Kind: "load", Status: result.Passed, Duration: dur, Latency: lat}
		t.Attempts = []result.Attempt{{Status: t.Status, Duration: dur, Latency: lat}}
		col.Tests = append(col.Tests, t)
	}
	return &result.Run{SchemaVersion: result.SchemaVersion, ID: run.RunID, StartedAt: run.StartedAt, Duration: dur,
		Interrupted: run.Interrupted, Collections: []*result.Collection{col}}
}

// writeLoadReports writes the --reporter files of a load run.
func (a *app) writeLoadReports(lr *loadRun, run *metrics.Run) error {
	if len(lr.reporters) == 0 {
		return nil
	}
	rr := loadResult(run)
	for _, rs := range lr.reporters {
		rep, err := reporters.New(rs.name, &reporters.Options{Title: "mcpspec load run " + run.RunID})
		if err != nil {
			return configError(err.Error(), "")
		}
		f, err := os.Create(rs.path)
		if err != nil {
			return &Error{Code: ExitRuntime, Msg: fmt.Sprintf("--reporter %s=%s: %v", rs.name, rs.path, err), Err: err}
		}
		err = rep.Report(f, rr)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return &Error{Code: ExitRuntime, Msg: fmt.Sprintf("--reporter %s=%s: %v", rs.name, rs.path, err), Err: err}
		}
	}
	return nil
}
