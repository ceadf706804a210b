//go:build linux

package interop

import (
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/detect/deadlock"
	"github.com/mcpspec/mcpspec/detect/fuzz"
	"github.com/mcpspec/mcpspec/detect/headofline"
	"github.com/mcpspec/mcpspec/detect/probe"
	"github.com/mcpspec/mcpspec/detect/race"
	"github.com/mcpspec/mcpspec/internal/cli"
	"github.com/mcpspec/mcpspec/loadgen/leak"
	"github.com/mcpspec/mcpspec/loadgen/metrics"
)

// Buggy/healthy twins: small servers written by hand in other languages and SDKs, each pair
// differing only in one bug of a class mcpspec's detectors hunt (a lazy-init deadlock, a race,
// head-of-line blocking, a leak, a crash on malformed input). The detectors run through the
// CLI, as a user runs them: on the buggy twin they must find the bug with the right
// classification, on the healthy twin nothing. buggy_py_test.go has the Python twins,
// buggy_gosdk_test.go the Go SDK ones.

// twinGate skips unless MCPSPEC_INTEROP=1: the twins start interpreters and build binaries.
func twinGate(t *testing.T) {
	t.Helper()
	if os.Getenv(interopEnv) != "1" {
		t.Skipf("set %s=1 to run the buggy/healthy twin servers", interopEnv)
	}
}

// twinTarget is one server to run a verb against. runCLI marks every process a run starts
// and fails the test for any left behind.
type twinTarget struct{ spec string }

// newTwinTarget returns the target for SPEC.
func newTwinTarget(spec string) twinTarget { return twinTarget{spec: spec} }

// twinBound bounds one verb's run; the verbs' own flags keep them well below it.
const twinBound = 60 * time.Second

// run runs `mcpspec VERB --server SPEC ARGS… --json` in-process, decodes stdout into out and
// returns the exit code, failing on output that is not JSON. When the run is over, no process
// it started may be left.
func (tg twinTarget) run(t *testing.T, verb string, out any, args ...string) cli.ExitCode {
	t.Helper()
	argv := append([]string{verb, "--server", tg.spec, "--json"}, args...)
	start := time.Now()
	r := runCLI(t, twinBound, argv...)
	t.Logf("mcpspec %s: exit %d in %v", strings.Join(argv, " "), r.code, time.Since(start).Round(time.Millisecond))
	if err := json.Unmarshal(r.stdout, out); err != nil {
		t.Fatalf("mcpspec %s: exit %d, stdout is not its JSON report (%v)\n%s\nstderr:\n%s", verb, r.code, err, tail(r.stdout, 2000), tail([]byte(r.stderr), 2000))
	}
	if r.stderr != "" {
		t.Logf("stderr:\n%s", tail([]byte(r.stderr), 1500))
	}
	return r.code
}

// deadlock runs `mcpspec deadlock` on tool, with short hang thresholds.
func (tg twinTarget) deadlock(t *testing.T, tool string) (*deadlock.Report, cli.ExitCode) {
	t.Helper()
	var r deadlock.Report
	code := tg.run(t, "deadlock", &r, "--tool", tool, "--hang-after", "2s", "--grace", "2s", "--max-time", "40s")
	for _, p := range r.Probes {
		t.Logf("  %s: %s — %s", p.Name, p.Verdict, p.Diagnosis)
	}
	return &r, code
}

// race runs `mcpspec race` on tool with args.
func (tg twinTarget) race(t *testing.T, tool, args string) (*race.Report, cli.ExitCode) {
	t.Helper()
	var r race.Report
	code := tg.run(t, "race", &r, "--tool", tool, "--args", args, "--concurrency", "16", "--rounds", "2", "--max-time", "40s")
	t.Logf("  %s: %s — %s", tool, r.Verdict, r.Diagnosis)
	return &r, code
}

// headOfLine runs `mcpspec head-of-line` with a slow and a fast tool.
func (tg twinTarget) headOfLine(t *testing.T, slow, slowArgs, fast, fastArgs string) (*headofline.Report, cli.ExitCode) {
	t.Helper()
	var r headofline.Report
	code := tg.run(t, "head-of-line", &r, "--slow-tool", slow, "--slow-args", slowArgs, "--fast-tool", fast, "--fast-args", fastArgs,
		"--rounds", "3", "--slow-concurrency", "2", "--max-time", "40s")
	t.Logf("  %s: %s", r.Verdict, r.Diagnosis)
	return &r, code
}

// twinLeakRate and twinLeakSoak are the short soak of the leak twins: 1,500 calls, RSS read
// every 200ms, a leak verdict allowed after 300 calls (the twins have no warm-up to wait out).
const (
	twinLeakRate = 300
	twinLeakSoak = 5 * time.Second
)

// leak runs `mcpspec load` as a short soak of tool and returns the leak analysis.
func (tg twinTarget) leak(t *testing.T, tool, args string) *metrics.Run {
	t.Helper()
	var r metrics.Run
	code := tg.run(t, "load", &r, "--tool", tool, "--args", args, "--scenario", "soak",
		"--rate", strconv.Itoa(twinLeakRate)+"/s", "--duration", twinLeakSoak.String(), "--iterations", strconv.Itoa(int(twinLeakRate*twinLeakSoak.Seconds())),
		"--sample-interval", "200ms", "--leak-min-calls", "300", "--progress", "off", "--out", t.TempDir(), "--run-id", "soak")
	// A leak verdict fails the run by its default gate (exit 1); anything else must pass.
	leaked := r.Leak != nil && r.Leak.Verdict == string(leak.Leak)
	if (code != cli.ExitOK && !(leaked && code == cli.ExitFailure)) || r.Leak == nil || r.Process == nil {
		t.Fatalf("load: exit %d, leak %+v, process sampled %v", code, r.Leak, r.Process != nil)
	}
	if r.Errors.Total > 0 {
		t.Errorf("%d of %d calls failed: %+v", r.Errors.Total, r.Throughput.TotalRequests, r.Errors.ByCategory)
	}
	lk := r.Leak
	t.Logf("  %d calls, RSS %.1f → %.1f MB: %s — %s (slope %.2f MB/s, R² %.2f, %.1f KB/call)", r.Throughput.TotalRequests,
		r.Process.Samples[0].RSSMB, r.Process.FinalRSSMB, lk.Verdict, lk.Reason, lk.SlopeMBPerSec, lk.R2, lk.KBPerCall)
	return &r
}

// twinFuzzReport is `mcpspec fuzz --json`.
type twinFuzzReport struct {
	fuzz.Report
	FindingCount int `json:"findingCount"`
}

// fuzz runs `mcpspec fuzz` with a fixed seed over every family (or those extra flags name).
func (tg twinTarget) fuzz(t *testing.T, iterations int, extra ...string) (*twinFuzzReport, cli.ExitCode) {
	t.Helper()
	var r twinFuzzReport
	args := append([]string{"--seed", "7", "--iterations", strconv.Itoa(iterations), "--hang-after", "5s", "--minimize-runs", "10", "--time", "40s"}, extra...)
	code := tg.run(t, "fuzz", &r, args...)
	t.Logf("  %d cases, stopped by %s, %d finding(s), outcomes %v, %d respawns", r.Cases, r.StoppedBy, r.FindingCount, r.Outcomes, r.Respawns)
	for _, f := range r.Findings {
		t.Logf("  finding %s %s [%s/%s] %s: %s", f.ID, f.Outcome, f.Family, f.Kind, f.What, f.Detail)
	}
	return &r, code
}

// probeClean runs `mcpspec probe` and fails on any failed row but the allowed ones (true
// failures of the SDK the twin is built on, not of the twin).
func (tg twinTarget) probeClean(t *testing.T, allowed ...string) {
	t.Helper()
	var r probe.Report
	code := tg.run(t, "probe", &r)
	t.Logf("  %d pass, %d warn, %d fail, %d n/a", r.Counts.Pass, r.Counts.Warn, r.Counts.Fail, r.Counts.NotApplicable)
	allowedOnly := true
	for _, row := range r.Results {
		switch {
		case row.Status == probe.Fail && slices.Contains(allowed, row.ID):
			t.Logf("  fail %s (%s), a known failure of the SDK: %s", row.ID, row.Version, row.Message)
		case row.Status == probe.Fail:
			allowedOnly = false
			t.Errorf("row %s (%s) failed: %s", row.ID, row.Version, row.Message)
		case row.Status == probe.Warn:
			t.Logf("  warn %s (%s): %s", row.ID, row.Version, row.Message)
		}
	}
	if (code != cli.ExitOK && !(code == cli.ExitFailure && allowedOnly && len(allowed) > 0)) || r.Counts.Pass < 20 {
		t.Errorf("probe: exit %d with %d rows passed", code, r.Counts.Pass)
	}
}

// twinExpectDeadlock asserts the concurrent-only diagnosis of a lazy-init deadlock on tool.
func twinExpectDeadlock(t *testing.T, r *deadlock.Report, code cli.ExitCode, tool string) {
	t.Helper()
	if code != cli.ExitFailure || r.Verdict != deadlock.VerdictDeadlock || r.DeadlockCount == 0 {
		t.Fatalf("exit %d, verdict %s, deadlock_count %d: the lazy-init deadlock was missed", code, r.Verdict, r.DeadlockCount)
	}
	p := r.Probes[0]
	if p.Tool != tool || p.Verdict != deadlock.VerdictDeadlock || !strings.HasPrefix(p.Diagnosis, "passes sequentially") ||
		!strings.Contains(p.Diagnosis, "deadlocks under 16 concurrent calls") {
		t.Errorf("probe %s: %s — %s; want a deadlock that only concurrent calls show", p.Name, p.Verdict, p.Diagnosis)
	}
}

// twinExpectNoDeadlock asserts that every call was answered in time.
func twinExpectNoDeadlock(t *testing.T, r *deadlock.Report, code cli.ExitCode) {
	t.Helper()
	if code != cli.ExitOK || r.Verdict != deadlock.VerdictClean || r.DeadlockCount != 0 || r.HangCount != 0 || r.CrashCount != 0 || len(r.Probes) < 2 {
		t.Errorf("false alarm: exit %d, verdict %s, deadlock_count %d, hang_count %d, crash_count %d, %d probes", code, r.Verdict, r.DeadlockCount, r.HangCount, r.CrashCount, len(r.Probes))
	}
}

// twinExpectNoRace asserts a verdict that is not a race (want: deterministic or by design).
func twinExpectNoRace(t *testing.T, r *race.Report, code cli.ExitCode, want race.Verdict) {
	t.Helper()
	if code != cli.ExitOK || r.Verdict != want {
		t.Errorf("exit %d, verdict %s (%s), want %s", code, r.Verdict, r.Diagnosis, want)
	}
}

// twinExpectHOL asserts a head-of-line verdict and its exit code.
func twinExpectHOL(t *testing.T, r *headofline.Report, code cli.ExitCode, want headofline.Verdict) {
	t.Helper()
	wantCode := cli.ExitOK
	if want != headofline.VerdictConcurrent {
		wantCode = cli.ExitFailure
	}
	if code != wantCode || r.Verdict != want {
		t.Errorf("exit %d, verdict %s (%s), want %s", code, r.Verdict, r.Diagnosis, want)
	}
}

// twinExpectLeak asserts the leak analysis's verdict on a soak of the buggy or healthy twin.
func twinExpectLeak(t *testing.T, r *metrics.Run, buggy bool) {
	t.Helper()
	lk := r.Leak
	if buggy && (lk.Verdict != string(leak.Leak) || lk.KBPerCall < 16) {
		t.Errorf("the unbounded cache was not called a leak: %s — %s, %.1f KB/call", lk.Verdict, lk.Reason, lk.KBPerCall)
	}
	if !buggy && lk.Verdict == string(leak.Leak) {
		t.Errorf("a bounded cache called a leak: %s", lk.Reason)
	}
}

// twinExpectCrash asserts that fuzzing found the crash, in a tools/call of tool.
func twinExpectCrash(t *testing.T, r *twinFuzzReport, code cli.ExitCode, tool string) {
	t.Helper()
	if code != cli.ExitFailure || r.FindingCount == 0 {
		t.Fatalf("exit %d with %d findings: the crash was missed", code, r.FindingCount)
	}
	for _, f := range r.Findings {
		if f.Outcome != fuzz.Crash || f.Tool != tool || !f.Reproduced {
			t.Errorf("finding %s: %s of %q (reproduced %v), want a reproduced crash of %s", f.ID, f.Outcome, f.Tool, f.Reproduced, tool)
		}
	}
}

// twinExpectNoFinding asserts that fuzzing found nothing.
func twinExpectNoFinding(t *testing.T, r *twinFuzzReport, code cli.ExitCode) {
	t.Helper()
	if code != cli.ExitOK || r.FindingCount != 0 || r.Cases == 0 {
		t.Errorf("exit %d, %d findings in %d cases, want none", code, r.FindingCount, r.Cases)
	}
}
