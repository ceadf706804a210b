package fuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/detect/fuzz/mutate"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// quick are options for bounded test runs.
func quick(iterations int, families ...mutate.Family) *Options {
	return &Options{Iterations: iterations, Seed: 1, Families: families, HangAfter: 2 * time.Second, Liveness: time.Second,
		SkipTools: []string{"slow"}, MinimizeTime: 30 * time.Second}
}

// TestFindsACrashingHandler: a tools/call handler that panics on a wrong type is a crash, found
// by the schema cases, reproduced on a fresh session and minimised; the server is restarted
// after each crash and the run goes on to the end.
func TestFindsACrashingHandler(t *testing.T) {
	t.Parallel()
	o := quick(25, mutate.Schema)
	o.Tools = []string{"echo"}
	rep := fuzzRun(t, testserver(t, "--panic-on-wrong-type"), o)
	crashes := findings(rep, Crash)
	if len(crashes) == 0 {
		t.Fatalf("no crash found: %s (%s)", rep.Summary(), rep.OutcomeLine())
	}
	if rep.Cases != 25 || rep.Respawns == 0 {
		t.Errorf("cases %d, respawns %d: want every case run, with restarts", rep.Cases, rep.Respawns)
	}
	f := crashes[0]
	if !f.Reproduced || f.Tool != "echo" || !strings.Contains(f.Stderr, "panic: mcptest") || !strings.Contains(f.Detail, "exited with status 2") {
		t.Errorf("finding %+v", f)
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal(f.Args, &args); err != nil || len(args) != 1 || args["text"] == nil || bytes.HasPrefix(args["text"], []byte(`"`)) {
		t.Errorf("minimised arguments %s: want only text, of a wrong type", f.Args)
	}
}

// TestFindsALateCrash: a server that answers a call, then dies of it a moment later (a Node
// timer that throws after the handler returned), is found dead only during a later case. The
// crash is blamed on the case that caused it, reproduced, and not on the innocent case that
// happened to run when it died.
func TestFindsALateCrash(t *testing.T) {
	t.Parallel()
	o := quick(40, mutate.Schema)
	o.Tools = []string{"echo"}
	rep := fuzzRun(t, lateCrashServer(t), o)
	crashes := findings(rep, Crash)
	if len(crashes) == 0 {
		t.Fatalf("no crash found: %s (%s)", rep.Summary(), rep.OutcomeLine())
	}
	for _, f := range crashes {
		if !f.Reproduced || f.Tool != "echo" || !bytes.Contains(f.Args, []byte(`\ud800`)) || !strings.Contains(f.Stderr, "URIError") {
			t.Errorf("finding %s: reproduced %v, %s: %s with %.200s (%s); stderr %q", f.ID, f.Reproduced, f.Kind, f.What, f.Args, f.Detail, f.Stderr)
		}
	}
}

// TestFindsAParserThatDiesOnDeepNesting: a frame nested past the parser's limit may be refused
// but not crash the server; the frame is minimised to just past the limit.
func TestFindsAParserThatDiesOnDeepNesting(t *testing.T) {
	t.Parallel()
	o := quick(12, mutate.DeepNesting)
	o.MinimizeRuns = 30
	rep := fuzzRun(t, testserver(t, "--crash-on-depth 200"), o)
	crashes := findings(rep, Crash)
	if len(crashes) == 0 {
		t.Fatalf("no crash found: %s (%s)", rep.Summary(), rep.OutcomeLine())
	}
	f := crashes[0]
	if !f.Reproduced || !f.Minimized || f.Size >= f.OriginalSize {
		t.Errorf("finding not minimised: %+v", f)
	}
	if d := depth(f.Frames[0]); d <= 200 || d > 260 {
		t.Errorf("minimised frame nests %d levels, want just past 200", d)
	}
	if !strings.Contains(f.Detail, "crashed on a frame it may refuse") {
		t.Errorf("detail %q", f.Detail)
	}
}

// TestFindsAMalformedAnswer: a method answered with truncated JSON is a malformed answer.
func TestFindsAMalformedAnswer(t *testing.T) {
	t.Parallel()
	rep := fuzzRun(t, testserver(t, "--malformed-method prompts/get"), quick(40, mutate.BadParams))
	mal := findings(rep, Malformed)
	if len(mal) == 0 {
		t.Fatalf("no malformed answer found: %s (%s)", rep.Summary(), rep.OutcomeLine())
	}
	if !mal[0].Reproduced || !bytes.Contains(mal[0].Frames[0], []byte(`"prompts/get"`)) || mal[0].Answer == nil {
		t.Errorf("finding %+v", mal[0])
	}
}

// TestProgressTokenVaries: schema cases call tools with and without a progressToken in
// params._meta, so a handler that fails on either is found, and its finding says which.
func TestProgressTokenVaries(t *testing.T) {
	t.Parallel()
	for _, when := range []string{"with", "without"} {
		t.Run(when, func(t *testing.T) {
			t.Parallel()
			o := quick(6, mutate.Schema)
			o.Tools = []string{"echo"}
			rep := fuzzRun(t, testserver(t, "--panic-on-progress-token "+when), o)
			crashes := findings(rep, Crash)
			if len(crashes) != 1 || !crashes[0].Reproduced || crashes[0].ProgressToken != (when == "with") {
				t.Fatalf("crash findings %+v, want one, reproduced, progressToken %v (%s; %s)", crashes, when == "with", rep.OutcomeLine(), rep.Summary())
			}
			if rep.Outcomes[Crash] == rep.Cases {
				t.Errorf("every case crashed (%s): the token does not vary", rep.OutcomeLine())
			}
		})
	}
}

// TestUnconfirmedFindingDoesNotFail: a malformed frame seen once, that does not show again
// when its case runs on a fresh session, is listed as unconfirmed and fails nothing; its twin,
// a malformed answer that shows every time, is TestFindsAMalformedAnswer.
func TestUnconfirmedFindingDoesNotFail(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "stray-sent")
	rep := fuzzRun(t, openerFor(t, spec.Join([]string{os.Args[0], "strayonce", marker}), nil), quick(10, mutate.BadParams))
	if rep.Bugs() != 0 || len(rep.Findings) != 0 {
		t.Errorf("%d finding(s), want none: %s", rep.Bugs(), rep.Summary())
	}
	if len(rep.Unconfirmed) != 1 || rep.Unconfirmed[0].Outcome != Malformed || rep.Unconfirmed[0].Reproduced ||
		!rep.Unconfirmed[0].Unconfirmed || rep.Unconfirmed[0].ID != "U1" {
		t.Fatalf("unconfirmed %+v, want one malformed U1 (%s; %s)", rep.Unconfirmed, rep.Summary(), rep.OutcomeLine())
	}
	if !strings.Contains(rep.Summary(), "1 unconfirmed") {
		t.Errorf("summary %q", rep.Summary())
	}
	var skipped int
	for _, tc := range rep.Tests() {
		if tc.Status == result.Failed {
			t.Errorf("failed test %s: %+v", tc.Name, tc.Failures)
		}
		if tc.Status == result.Skipped && strings.HasPrefix(tc.SkipReason, "unconfirmed") {
			skipped++
		}
	}
	if skipped != 1 {
		t.Errorf("%d skipped unconfirmed test(s), want 1", skipped)
	}
}

// TestFindsAHang: a well-formed request for an unknown method must be answered (-32601).
func TestFindsAHang(t *testing.T) {
	t.Parallel()
	o := quick(6, mutate.BadMethod)
	o.HangAfter = 500 * time.Millisecond
	rep := fuzzRun(t, testserver(t, "--silent-unknown-methods"), o)
	hangs := findings(rep, Hang)
	if len(hangs) == 0 {
		t.Fatalf("no hang found: %s (%s)", rep.Summary(), rep.OutcomeLine())
	}
	if !strings.Contains(hangs[0].Detail, "though the server answers a ping") {
		t.Errorf("detail %q", hangs[0].Detail)
	}
}

// TestAcceptedInvalidOnlyWhenStrict: arguments that break the schema answered with success
// are reported, and a bug only under Strict.
func TestAcceptedInvalidOnlyWhenStrict(t *testing.T) {
	t.Parallel()
	o := quick(30, mutate.Schema)
	o.Tools = []string{"echo"}
	lax := fuzzRun(t, testserver(t, "--accept-invalid"), o)
	if lax.Outcomes[AcceptedInvalid] == 0 || len(lax.Findings) != 0 {
		t.Errorf("not strict: %d accepted-invalid cases, %d findings; want some and none", lax.Outcomes[AcceptedInvalid], len(lax.Findings))
	}
	o.Strict = true
	strict := fuzzRun(t, testserver(t, "--accept-invalid"), o)
	if len(findings(strict, AcceptedInvalid)) == 0 {
		t.Errorf("strict: no accepted-invalid finding (%s)", strict.OutcomeLine())
	}
	clean := fuzzRun(t, testserver(t, ""), o)
	if len(clean.Findings) != 0 {
		t.Errorf("strict on a well-behaved echo: %s", clean.Summary())
	}
}

// TestNoFalseAlarms: the well-behaved reference server, in both eras, shows no finding.
func TestNoFalseAlarms(t *testing.T) {
	t.Parallel()
	for _, flags := range []string{"", "--era legacy"} {
		t.Run("testserver "+flags, func(t *testing.T) {
			t.Parallel()
			o := quick(120)
			o.Seed = 5
			rep := fuzzRun(t, testserver(t, flags), o)
			if len(rep.Findings) != 0 {
				for _, f := range rep.Findings {
					t.Errorf("false alarm %s %s: %s: %s\n%s", f.ID, f.Outcome, f.What, f.Detail, f.request())
				}
			}
			if rep.Cases != 120 || len(rep.Families) < 10 {
				t.Errorf("%d cases over %d families", rep.Cases, len(rep.Families))
			}
		})
	}
}

// TestExitOnGarbageIsACrash: a server process that exits on a line that is not JSON (as the Go
// SDK does, "Server failed: invalid character …", exit 1) is taken down by one bad line from
// any client: a crash, whether it exits cleanly, after a traceback or with status 2. However
// many cases and families show it, it is one finding per cause. (A server that closes the
// connection and stays up, over a network transport, is "closed"; the healthy twin, which
// answers -32700 and reads on, is TestNoFalseAlarms.)
func TestExitOnGarbageIsACrash(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ mode, detail string }{
		{"clean", "the server process exited on a frame it may refuse"},
		{"trace", "the server crashed on a frame it may refuse"},
		{"status2", "the server crashed on a frame it may refuse"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			o := quick(8, mutate.MalformedJSON, mutate.Truncated)
			o.MinimizeRuns = 2
			rep := fuzzRun(t, closerServer(t, tc.mode), o)
			crashes := findings(rep, Crash)
			if len(rep.Findings) != 1 || len(crashes) != 1 {
				t.Fatalf("%d finding(s), %d crash(es); want one crash (%s; %s)", len(rep.Findings), len(crashes), rep.OutcomeLine(), rep.Summary())
			}
			if !strings.Contains(crashes[0].Detail, tc.detail) || crashes[0].Count < 2 || rep.Outcomes[Closed] != 0 {
				t.Errorf("finding %s ×%d: %s (outcomes %s)", crashes[0].ID, crashes[0].Count, crashes[0].Detail, rep.OutcomeLine())
			}
		})
	}
}

// TestCrashAfterCallsIsNotBlamedOnACase: a server that dies at its fourth tools/call whatever
// the arguments is one finding that says so, not one per case that happened to run fourth.
// Its twin, a handler that crashes on one input, is TestFindsACrashingHandler.
func TestCrashAfterCallsIsNotBlamedOnACase(t *testing.T) {
	t.Parallel()
	o := quick(20, mutate.Schema)
	o.Tools = []string{"echo", "add"}
	rep := fuzzRun(t, openerFor(t, spec.Join([]string{os.Args[0], "crashafter", "4"}), nil), o)
	if len(rep.Findings) != 1 || rep.Findings[0].AfterCalls != 4 || rep.Findings[0].Kind != "after-calls" {
		t.Fatalf("findings %+v, want one after 4 calls (%s; %s)", rep.Findings, rep.OutcomeLine(), rep.Summary())
	}
	f := rep.Findings[0]
	if len(rep.Unconfirmed) != 0 || f.Count < 2 || !strings.Contains(f.What, "any input") || f.Tool != "" || f.Frames != nil {
		t.Errorf("finding %+v; unconfirmed %d", f, len(rep.Unconfirmed))
	}
}

// TestAnyInputIsNotMinimised: a server that logs plain text to stdout on every tools/call sends
// a malformed frame whatever the arguments: one finding, marked as not depending on the input,
// and not "minimised" to a lone character. Its twin, a malformed answer to one method only, is
// TestFindsAMalformedAnswer.
func TestAnyInputIsNotMinimised(t *testing.T) {
	t.Parallel()
	o := quick(12, mutate.Schema)
	o.Tools = []string{"echo", "add"}
	rep := fuzzRun(t, openerFor(t, spec.Join([]string{os.Args[0], "stdoutlog"}), nil), o)
	mal := findings(rep, Malformed)
	if len(rep.Findings) != 1 || len(mal) != 1 {
		t.Fatalf("%d finding(s), %d malformed; want one (%s; %s)", len(rep.Findings), len(mal), rep.OutcomeLine(), rep.Summary())
	}
	if !mal[0].AnyInput || mal[0].Minimized || !strings.Contains(mal[0].Detail, "does not depend on the arguments") || mal[0].Count < 2 {
		t.Errorf("finding %+v", mal[0])
	}
}

// TestAnswerUnderAnotherIDIsOneHang: a server that answers requests whose id is not a plain
// integer under another id leaves each of them unanswered; whatever the id's shape, that is one
// finding naming the cause.
func TestAnswerUnderAnotherIDIsOneHang(t *testing.T) {
	t.Parallel()
	o := quick(40, mutate.BadID)
	o.HangAfter = 500 * time.Millisecond
	rep := fuzzRun(t, openerFor(t, spec.Join([]string{os.Args[0], "rewriteid"}), nil), o)
	hangs := findings(rep, Hang)
	if len(hangs) != 1 || hangs[0].Count < 2 {
		for _, h := range hangs {
			t.Logf("%s ×%d [%s] %s: %s", h.ID, h.Count, h.Kind, h.What, h.Detail)
		}
		t.Fatalf("%d hang finding(s), want one shown by several cases (%s; %s)", len(hangs), rep.OutcomeLine(), rep.Summary())
	}
	if !strings.Contains(hangs[0].Detail, "changed the request's id") {
		t.Errorf("detail %q", hangs[0].Detail)
	}
}

// TestSameSeedSameRun: two runs with one seed send the same frames in the same order.
func TestSameSeedSameRun(t *testing.T) {
	t.Parallel()
	record := func(seed int64) []string {
		var sent []string
		o := quick(40)
		o.Seed = seed
		o.OnCase = func(r CaseResult) {
			sent = append(sent, string(r.Case.Family)+" "+r.Case.Kind+" "+r.Case.What+" "+string(r.Case.Args))
		}
		fuzzRun(t, testserver(t, "--era legacy"), o)
		return sent
	}
	a, b := record(9), record(9)
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Error("the same seed sent different cases")
	}
	if c := record(10); strings.Join(a, "\n") == strings.Join(c, "\n") {
		t.Error("another seed sent the same cases")
	}
}

// TestBounds: the run stops at its time bound; an interrupted run returns what it found.
func TestBounds(t *testing.T) {
	t.Parallel()
	o := quick(1_000_000, mutate.BadMethod, mutate.BadParams)
	o.Time = 1500 * time.Millisecond
	start := time.Now()
	rep := fuzzRun(t, testserver(t, ""), o)
	if rep.StoppedBy != "time" || time.Since(start) > 10*time.Second || rep.Cases == 0 {
		t.Errorf("stopped by %s after %s and %d cases", rep.StoppedBy, time.Since(start), rep.Cases)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	rep, err := Run(ctx, testserver(t, ""), quick(1_000_000, mutate.BadMethod))
	if err == nil || rep == nil || rep.StoppedBy != "interrupted" {
		t.Errorf("interrupted: %v, %+v", err, rep)
	}
}

// TestRunErrors: a server that cannot start, and options that leave nothing to fuzz.
func TestRunErrors(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := Run(ctx, openerFor(t, "/nonexistent/mcpspec-server", nil), nil)
	var se *serverconn.Error
	if !errors.As(err, &se) {
		t.Errorf("missing server: %v, want a *serverconn.Error", err)
	}
	o := quick(5, mutate.Schema)
	o.Tools = []string{"no-such-tool"}
	if _, err := Run(ctx, testserver(t, ""), o); !errors.Is(err, ErrNothingToFuzz) {
		t.Errorf("nothing to fuzz: %v", err)
	}
}

// TestOverStreamableHTTP: an in-process server over Streamable HTTP: the malformed answer is
// found there too (in the legacy era: a stateless-era request needs Mcp-Method headers, which
// hand-built frames do not get, so the server refuses them with 400), and the well-behaved
// server shows nothing.
func TestOverStreamableHTTP(t *testing.T) {
	t.Parallel()
	bad := mcptest.NewServer(&mcptest.Options{MalformedMethod: "prompts/get", Era: mcptest.EraLegacy})
	defer bad.Close()
	rep := fuzzRun(t, openerFor(t, bad.URL, nil), quick(40, mutate.BadParams))
	if len(findings(rep, Malformed)) == 0 {
		t.Errorf("no malformed answer over HTTP: %s (%s)", rep.Summary(), rep.OutcomeLine())
	}
	good := mcptest.NewServer(nil)
	defer good.Close()
	if rep := fuzzRun(t, openerFor(t, good.URL, nil), quick(60)); len(rep.Findings) != 0 {
		t.Errorf("false alarm over HTTP: %s: %+v", rep.Summary(), rep.Findings[0])
	}
}

// TestSavedFindingsReplay: the findings saved as a collection load, use the step each kind of
// finding needs, and a frame finding replays as a failure on the buggy server and passes on a
// fixed one.
func TestSavedFindingsReplay(t *testing.T) {
	t.Parallel()
	o := quick(25, mutate.Schema, mutate.DeepNesting)
	o.Tools, o.MinimizeRuns = []string{"echo"}, 30
	rep := fuzzRun(t, testserver(t, "--panic-on-wrong-type --crash-on-depth 200"), o)
	var b bytes.Buffer
	saved, err := WriteFindings(&b, rep, &SaveOptions{Server: SavedServer{Spec: "testserver --panic-on-wrong-type --crash-on-depth 200"}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := collection.Parse("findings.yaml", b.Bytes(), nil)
	if err != nil {
		t.Fatalf("saved findings do not load: %v\n%s", err, b.String())
	}
	if saved.Tests != len(c.Tests) || len(c.Tests) < 2 {
		t.Fatalf("%d tests saved, %d loaded:\n%s", saved.Tests, len(c.Tests), b.String())
	}
	var frame []byte
	for _, tt := range c.Tests {
		switch st := tt.Step.(type) {
		case *collection.ToolCall:
			if st.Tool != "echo" || tt.ExpectError == nil {
				t.Errorf("tool finding %q: %+v, want a call of echo expecting an error", tt.Name, st)
			}
		case *collection.Frame:
			frame = st.Data
		default:
			t.Errorf("test %q: step %T", tt.Name, st)
		}
	}
	if frame == nil {
		t.Fatalf("no frame finding saved:\n%s", b.String())
	}
	replay := func(op *serverconn.Opener) *FrameVerdict {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := op.Open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return ReplayFrame(ctx, c.Session, frame, 5*time.Second)
	}
	if v := replay(testserver(t, "--crash-on-depth 200")); !v.Bug() || v.Outcome != Crash || !v.Lost {
		t.Errorf("replay on the buggy server: %+v", v)
	}
	if v := replay(testserver(t, "")); v.Bug() {
		t.Errorf("replay on a fixed server: %+v", v)
	}
}

// TestReplayFrameOutcomes covers the verdicts a frame step gives.
func TestReplayFrameOutcomes(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	open := func(op *serverconn.Opener) *session.Session {
		c, err := op.Open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c.Session
	}
	s := open(testserver(t, "--era legacy"))
	if v := ReplayFrame(ctx, s, []byte(`{"jsonrpc":"2.0","id":900001,"method":"tools/list"}`), 5*time.Second); v.Outcome != Answered || v.Result == nil {
		t.Errorf("tools/list: %+v", v)
	}
	if v := ReplayFrame(ctx, s, []byte(`{"jsonrpc":"2.0","id":900002,"method":"nope"}`), 5*time.Second); v.Outcome != Rejected || v.Rejection.Code != -32601 {
		t.Errorf("unknown method: %+v", v)
	}
	if v := ReplayFrame(ctx, s, []byte(`{"jsonrpc":"2.0","method":"notifications/nope"}`), 5*time.Second); v.Bug() {
		t.Errorf("unknown notification: %+v", v)
	}
	if v := ReplayFrame(ctx, s, []byte(`{garbage`), 5*time.Second); v.Bug() || v.Lost {
		t.Errorf("garbage: %+v", v)
	}
	silent := open(testserver(t, "--era legacy --silent-unknown-methods"))
	if v := ReplayFrame(ctx, silent, []byte(`{"jsonrpc":"2.0","id":900003,"method":"nope"}`), 500*time.Millisecond); v.Outcome != Hang {
		t.Errorf("silent server: %+v", v)
	}
	closing := open(closerServer(t, "clean"))
	if v := ReplayFrame(ctx, closing, []byte(`{garbage`), 5*time.Second); v.Outcome != Crash || !v.Lost || !v.Bug() {
		t.Errorf("a server that exits on garbage: %+v, want a crash", v)
	}
}
