//go:build linux

package interop

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
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
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// The detectors against servers written with the official TypeScript SDK the way their
// authors write them, none written against the detectors: testdata/buggy-node holds a
// buggy/healthy twin pair per bug class (the twins differ only in the bug; `diff` them). Each
// test runs the command a user runs, in process, and reads its --json report: the buggy twin
// must be found with the right classification, the healthy one must raise nothing.

// buggyNodeDir holds the servers.
const buggyNodeDir = "testdata/buggy-node"

// buggyNode is node and the absolute path of the twins' directory.
type buggyNode struct {
	node, dir string
}

// requireBuggyNode skips unless MCPSPEC_INTEROP=1, then fails when node or the SDK is missing.
func requireBuggyNode(t *testing.T) buggyNode {
	t.Helper()
	if os.Getenv(interopEnv) != "1" {
		t.Skipf("set %s=1 to run the Node interop peers (after: cd interop && npm ci)", interopEnv)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("%s=1 but node is not on PATH: %v", interopEnv, err)
	}
	raw, err := os.ReadFile(filepath.Join("node_modules", "@modelcontextprotocol", "sdk", "package.json"))
	if err != nil {
		t.Fatalf("%s=1 but the TypeScript SDK is not installed (%v): run `cd interop && npm ci`", interopEnv, err)
	}
	var meta struct {
		Version string `json:"version"`
	}
	_ = json.Unmarshal(raw, &meta)
	dir, err := filepath.Abs(buggyNodeDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("@modelcontextprotocol/sdk %s, %s", meta.Version, node)
	return buggyNode{node: node, dir: dir}
}

// spec is the --server SPEC that runs the twin script over stdio.
func (b buggyNode) spec(script string) string {
	return spec.Join([]string{b.node, filepath.Join(b.dir, script)})
}

// http starts the twin script over Streamable HTTP on a loopback port and returns its endpoint.
func (b buggyNode) http(t *testing.T, script string) string {
	t.Helper()
	return startHTTPPeer(t, nodePeer{node: b.node, entry: filepath.Join(b.dir, script)}).base + "/mcp"
}

// TestBuggyNodeDeadlock: a lazy init whose waiters share one resolver slot, so all but the last
// of the callers that arrive during the load wait forever. One call at a time never sees it.
// Over stdio (a process per session) and over Streamable HTTP (an McpServer per session).
func TestBuggyNodeDeadlock(t *testing.T) {
	b := requireBuggyNode(t)
	t.Parallel()
	flags := []string{"--tool", "define", "--args", `{"term":"mcp"}`, "--hang-after", "2s", "--grace", "2s", "--json"}
	for _, c := range []struct {
		name, script string
		http         bool
	}{
		{"stdio/buggy", "lazyinit-buggy.mjs", false},
		{"stdio/healthy", "lazyinit-healthy.mjs", false},
		{"http/buggy", "lazyinit-buggy.mjs", true},
		{"http/healthy", "lazyinit-healthy.mjs", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			server := b.spec(c.script)
			if c.http {
				server = b.http(t, c.script)
			}
			run := runCLI(t, 60*time.Second, append([]string{"deadlock", "--server", server}, flags...)...)
			var r deadlock.Report
			run.decode(t, &r)
			logReport(t, r.WriteText)
			if strings.Contains(c.script, "healthy") {
				run.wantExit(t, cli.ExitOK)
				if r.Verdict != deadlock.VerdictClean || r.DeadlockCount != 0 || r.HangCount != 0 || r.CrashCount != 0 {
					t.Errorf("false alarm: verdict %s, deadlock_count %d, hang_count %d, crash_count %d", r.Verdict, r.DeadlockCount, r.HangCount, r.CrashCount)
				}
				return
			}
			run.wantExit(t, cli.ExitFailure)
			if r.Verdict != deadlock.VerdictDeadlock || r.DeadlockCount == 0 || len(r.Probes) == 0 {
				t.Fatalf("missed: verdict %s, deadlock_count %d, %d probes", r.Verdict, r.DeadlockCount, len(r.Probes))
			}
			// The tool's own probe gives the concurrent-only diagnosis. On a server shared by
			// every session (HTTP), the tools/list race goes first and may wedge the server
			// before the tool is tried alone: then that race must name the stuck tool.
			concurrentOnly := func(p deadlock.Probe) bool {
				return p.Tool == "define" && p.Verdict == deadlock.VerdictDeadlock &&
					strings.Contains(p.Diagnosis, "passes sequentially") && strings.Contains(p.Diagnosis, "deadlocks under 16 concurrent calls")
			}
			listRace := func(p deadlock.Probe) bool {
				return c.http && strings.Contains(p.Name, "list race") && p.Verdict == deadlock.VerdictDeadlock && strings.Contains(p.Diagnosis, "stuck: define")
			}
			if !slices.ContainsFunc(r.Probes, concurrentOnly) && !slices.ContainsFunc(r.Probes, listRace) {
				for _, p := range r.Probes {
					t.Errorf("probe %s: %s: %s", p.Name, p.Verdict, p.Diagnosis)
				}
				t.Error("want the concurrent-only deadlock of define")
			}
		})
	}
}

// TestBuggyNodeRace: a report built in a module-level buffer across awaits. Identical calls
// must differ only under concurrency, and the cross-talk form must see another call's customer
// in an answer. A tool answering a fresh uuid and timestamp is non-deterministic by design.
func TestBuggyNodeRace(t *testing.T) {
	b := requireBuggyNode(t)
	t.Parallel()
	for _, c := range []struct {
		name, script, tool, args string
		want                     race.Verdict
	}{
		{"buggy", "race-buggy.mjs", "order_history", `{"customer":"ada"}`, race.VerdictRace},
		{"healthy", "race-healthy.mjs", "order_history", `{"customer":"ada"}`, race.VerdictDeterministic},
		{"healthy/by-design", "race-healthy.mjs", "new_order_id", `{}`, race.VerdictByDesign},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			run := runCLI(t, 60*time.Second, "race", "--server", b.spec(c.script), "--tool", c.tool, "--args", c.args,
				"--concurrency", "8", "--rounds", "2", "--json")
			var r race.Report
			run.decode(t, &r)
			logReport(t, r.WriteText)
			if r.Verdict != c.want {
				t.Fatalf("verdict %s (%s), want %s", r.Verdict, r.Diagnosis, c.want)
			}
			if c.want != race.VerdictRace {
				run.wantExit(t, cli.ExitOK)
				if r.CrossTalk != nil && r.CrossTalk.Verdict == race.CrossTalkLeak {
					t.Errorf("false cross-talk: %s", r.CrossTalk.Reason)
				}
				return
			}
			run.wantExit(t, cli.ExitFailure)
			if !slices.Contains(r.DivergentPaths, "$.content[0].text") || len(r.VolatilePaths) != 0 {
				t.Errorf("divergent %v, volatile %v: want $.content[0].text divergent, nothing volatile", r.DivergentPaths, r.VolatilePaths)
			}
			if r.CrossTalk == nil || r.CrossTalk.Verdict != race.CrossTalkLeak {
				t.Errorf("cross-talk missed: %+v", r.CrossTalk)
			}
		})
	}
}

// TestBuggyNodeHeadOfLine: a PBKDF2 hash derived with pbkdf2Sync holds the event loop, so a
// status call waits behind it; the healthy twin's async pbkdf2 runs on the thread pool. The
// twins run one after the other, and not in parallel with the other tests of the file: each
// measures latency, and the buggy one burns a core.
func TestBuggyNodeHeadOfLine(t *testing.T) {
	b := requireBuggyNode(t)
	for _, c := range []struct {
		name, script string
		want         headofline.Verdict
	}{
		{"buggy", "hol-buggy.mjs", headofline.VerdictSerializes},
		{"healthy", "hol-healthy.mjs", headofline.VerdictConcurrent},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := runCLI(t, 60*time.Second, "head-of-line", "--server", b.spec(c.script),
				"--slow-tool", "hash_password", "--slow-args", `{"password":"correct horse","iterations":1000000}`,
				"--fast-tool", "status", "--rounds", "3", "--samples", "5", "--slow-concurrency", "2", "--json")
			var r headofline.Report
			run.decode(t, &r)
			logReport(t, r.WriteText)
			if r.Verdict != c.want {
				t.Fatalf("verdict %s (%s), want %s", r.Verdict, r.Diagnosis, c.want)
			}
			if c.want == headofline.VerdictConcurrent {
				run.wantExit(t, cli.ExitOK)
			} else {
				run.wantExit(t, cli.ExitFailure)
			}
		})
	}
}

// TestBuggyNodeLeak: a render history that is never trimmed keeps every request's 34 KB of
// Markdown and its HTML; the healthy twin keeps the last 50. `mcpspec load` makes 2,400 calls,
// two at a time (bounded by count, not time, so a slow machine sees the same calls; about 4 s
// here), sampling every 200 ms with the default --leak-min-calls (10,000, for V8's warm-up
// growth): the buggy twin's growth per call is far above a warm-up's, so it is named a leak
// anyway, and the leak gate fails the run (exit 1); the healthy twin passes (exit 0). The
// payload is large so the healthy heap's garbage makes the sawtooth of major collections
// several times a run.
func TestBuggyNodeLeak(t *testing.T) {
	b := requireBuggyNode(t)
	t.Parallel()
	md := "# Orders\n\n" + strings.Repeat(strings.Repeat("lorem ipsum <b>dolor</b> & sit amet ", 480)+"\n\n", 2)
	args, _ := json.Marshal(map[string]string{"markdown": md})
	const calls = 2400
	for _, c := range []struct {
		name, script string
		leaks        bool
	}{
		{"buggy", "leak-buggy.mjs", true},
		{"healthy", "leak-healthy.mjs", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			run := runCLI(t, 90*time.Second, "load", "--server", b.spec(c.script), "--tool", "render_markdown", "--args", string(args),
				"--scenario", "soak", "--concurrency", "2", "--iterations", strconv.Itoa(calls), "--duration", "60s",
				"--sample-interval", "200ms", "--progress", "off", "--out", t.TempDir(), "--run-id", "r", "--json")
			var r metrics.Run
			run.decode(t, &r)
			if c.leaks {
				run.wantExit(t, cli.ExitFailure)
			} else {
				run.wantExit(t, cli.ExitOK)
			}
			lk, p := r.Leak, r.Process
			if r.Throughput.TotalRequests != calls || lk == nil || p == nil || len(p.Samples) < 10 {
				t.Fatalf("%d calls, leak analysis %+v, process sampled %v: want %d calls and 10 samples", r.Throughput.TotalRequests, lk, p != nil, calls)
			}
			rss := make([]string, len(p.Samples))
			for i, s := range p.Samples {
				rss[i] = strconv.FormatFloat(s.RSSMB, 'f', 0, 64)
			}
			t.Logf("%d calls, errors %d %v; RSS MB %s; %s: %s (slope %.2f MB/s, R² %.2f, %.1f KB/call)",
				r.Throughput.TotalRequests, r.Errors.Total, r.Errors.ByCategory, strings.Join(rss, " "), lk.Verdict, lk.Reason, lk.SlopeMBPerSec, lk.R2, lk.KBPerCall)
			if !c.leaks {
				if lk.Verdict == string(leak.Leak) {
					t.Errorf("a bounded history called a leak: %s", lk.Reason)
				}
				return
			}
			// Each call keeps its 34 KB argument and more of HTML.
			if lk.Verdict != string(leak.Leak) || lk.KBPerCall < float64(len(args))/1024 {
				t.Errorf("verdict %s (%s), %.1f KB/call: want a leak of at least %d KB per call", lk.Verdict, lk.Reason, lk.KBPerCall, len(args)/1024)
			}
		})
	}
}

// TestBuggyNodeFuzz: a notifier that delivers in a timer, outside the SDK's try/catch, and
// builds the webhook path with encodeURIComponent, which throws on a lone surrogate: the
// process dies. The healthy twin declares the channel's pattern, which the SDK enforces.
func TestBuggyNodeFuzz(t *testing.T) {
	b := requireBuggyNode(t)
	t.Parallel()
	for _, c := range []struct {
		name, script string
		crashes      bool
	}{
		{"buggy", "crash-buggy.mjs", true},
		{"healthy", "crash-healthy.mjs", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			run := runCLI(t, 90*time.Second, "fuzz", "--server", b.spec(c.script), "--family", "schema", "--seed", "7",
				"--iterations", "120", "--time", "60s", "--minimize-runs", "10", "--json")
			var r fuzz.Report
			run.decode(t, &r)
			t.Logf("%s\noutcomes: %s; %d respawns", r.Summary(), r.OutcomeLine(), r.Respawns)
			if r.StoppedBy != "iterations" {
				t.Errorf("stopped by %s (%s), want iterations", r.StoppedBy, r.Stopped)
			}
			if !c.crashes {
				run.wantExit(t, cli.ExitOK)
				for _, f := range r.Findings {
					t.Errorf("false alarm %s %s [%s] %s: %s", f.ID, f.Outcome, f.Kind, f.What, f.Detail)
				}
				return
			}
			run.wantExit(t, cli.ExitFailure)
			found := false
			for _, f := range r.Findings {
				t.Logf("%s %s [%s] %s: %s (args %s)", f.ID, f.Outcome, f.Kind, f.What, f.Detail, f.Args)
				if f.Outcome == fuzz.Crash && f.Tool == "notify" && f.Reproduced && strings.Contains(f.Stderr, "URIError") {
					found = true
				}
				if f.Outcome != fuzz.Crash {
					t.Errorf("finding %s is %s, want only crashes", f.ID, f.Outcome)
				}
			}
			if !found {
				t.Errorf("no reproduced crash of notify with the URIError on stderr among %d findings", len(r.Findings))
			}
		})
	}
}

// TestBuggyNodeProbe runs the conformance probe on a healthy twin: over stdio no row may fail.
// Over Streamable HTTP the one failure is true: like the SDK's own example, the twins' HTTP
// server checks neither Host nor Origin (the SDK's DNS-rebinding protection is opt-in).
func TestBuggyNodeProbe(t *testing.T) {
	b := requireBuggyNode(t)
	t.Parallel()
	for _, c := range []struct {
		name     string
		http     bool
		wantFail []string
	}{
		{name: "stdio"},
		{name: "http", http: true, wantFail: []string{"http.dns-rebinding"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			server := b.spec("lazyinit-healthy.mjs")
			if c.http {
				server = b.http(t, "lazyinit-healthy.mjs")
			}
			run := runCLI(t, 80*time.Second, "probe", "--server", server, "--json")
			var r probe.Report
			run.decode(t, &r)
			var failed []string
			for _, row := range r.Results {
				switch row.Status {
				case probe.Fail:
					failed = append(failed, row.ID)
					t.Logf("FAIL %s (%s): %s", row.ID, row.Version, row.Message)
				case probe.Warn:
					t.Logf("WARN %s (%s): %s", row.ID, row.Version, row.Message)
				}
			}
			t.Logf("%d pass · %d warn · %d fail · %d n/a", r.Counts.Pass, r.Counts.Warn, r.Counts.Fail, r.Counts.NotApplicable)
			if r.Counts.Pass < 15 {
				t.Errorf("only %d rows passed: the probe hardly ran", r.Counts.Pass)
			}
			if !slices.Equal(failed, c.wantFail) {
				t.Errorf("failed rows %v, want %v", failed, c.wantFail)
			}
			if len(c.wantFail) == 0 {
				run.wantExit(t, cli.ExitOK)
			} else {
				run.wantExit(t, cli.ExitFailure)
			}
		})
	}
}
