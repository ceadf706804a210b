package race_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/detect/internal/detecttest"
	"github.com/mcpspec/mcpspec/detect/race"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

// server starts a reference server over TCP and returns an opener for it.
func server(t *testing.T, o *mcptest.Options) *serverconn.Opener {
	t.Helper()
	srv := mcptest.NewTCPServer(o)
	t.Cleanup(srv.Close)
	return detecttest.Opener(t, "tcp://"+srv.Addr, session.Options{RequestTimeout: 20 * time.Second})
}

func TestDeterministicToolIsClean(t *testing.T) {
	r := detecttest.Run(t, race.Run, server(t, nil), &race.Options{Tool: "echo", Args: map[string]any{"text": "hello"}})
	if r.Verdict != race.VerdictDeterministic || r.Found() {
		t.Errorf("verdict %s: %s", r.Verdict, r.Diagnosis)
	}
	if want := race.DefaultConcurrency * race.DefaultRounds; r.ConcurrentCalls != want || len(r.Groups) != 1 {
		t.Errorf("%d concurrent calls in %d groups, want %d in 1", r.ConcurrentCalls, len(r.Groups), want)
	}
	if ct := r.CrossTalk; ct == nil || ct.Verdict != race.CrossTalkIsolated || !slices.Equal(ct.Fields, []string{"$.text"}) || ct.Echoes != race.DefaultConcurrency {
		t.Errorf("cross-talk %+v, want isolated on $.text with every answer echoing its marker", ct)
	}
	for _, tc := range r.Tests() {
		if tc.Status != result.Passed {
			t.Errorf("%s: %s", tc.Name, tc.Status)
		}
	}
}

func TestDivergentUnderConcurrencyIsARace(t *testing.T) {
	r := detecttest.Run(t, race.Run, server(t, &mcptest.Options{Divergent: true}), &race.Options{Tool: "slow", Args: map[string]any{"milliseconds": 30}, Concurrency: 8, Rounds: 2})
	if r.Verdict != race.VerdictRace || !r.Found() {
		t.Fatalf("verdict %s: %s", r.Verdict, r.Diagnosis)
	}
	if !slices.Contains(r.DivergentPaths, "$.content[0].text") || len(r.VolatilePaths) != 0 {
		t.Errorf("divergent %v, volatile %v", r.DivergentPaths, r.VolatilePaths)
	}
	if !strings.Contains(r.Diagnosis, "diverge only under concurrency") {
		t.Errorf("diagnosis %q", r.Diagnosis)
	}
	tc := r.Tests()[0]
	if tc.Status != result.Failed || len(tc.Failures) == 0 || !strings.Contains(tc.Failures[0].Message, "divergent #") {
		t.Errorf("test case %s with failures %+v", tc.Status, tc.Failures)
	}
}

func TestTimestampIsNonDeterministicByDesign(t *testing.T) {
	r := detecttest.Run(t, race.Run, server(t, &mcptest.Options{TimeTool: true}), &race.Options{Tool: "time", Concurrency: 8, Rounds: 2})
	if r.Verdict != race.VerdictByDesign || r.Found() {
		t.Fatalf("verdict %s: %s", r.Verdict, r.Diagnosis)
	}
	for _, p := range []string{"$.content[0].text", "$.structuredContent.time"} {
		if !slices.Contains(r.VolatilePaths, p) {
			t.Errorf("volatile paths %v lack %s", r.VolatilePaths, p)
		}
	}
	if r.CrossTalk == nil || r.CrossTalk.Verdict != race.CrossTalkSkipped {
		t.Errorf("cross-talk %+v, want skipped: time takes no string", r.CrossTalk)
	}
	// Ignoring the volatile fields makes the answers identical.
	ig, err := race.NewIgnore([]string{"$.structuredContent.time", "$.content[*].text"})
	if err != nil {
		t.Fatal(err)
	}
	r = detecttest.Run(t, race.Run, server(t, &mcptest.Options{TimeTool: true}), &race.Options{Tool: "time", Concurrency: 8, Rounds: 1, Ignore: ig})
	if r.Verdict != race.VerdictDeterministic {
		t.Errorf("with --ignore: verdict %s: %s", r.Verdict, r.Diagnosis)
	}
}

func TestCrossTalkIsARace(t *testing.T) {
	r := detecttest.Run(t, race.Run, server(t, &mcptest.Options{CrossTalk: true}), &race.Options{Tool: "echo", Args: map[string]any{"text": "hi"}, Concurrency: 8, Rounds: 1})
	if r.Verdict != race.VerdictRace || r.CrossTalk == nil || r.CrossTalk.Verdict != race.CrossTalkLeak || len(r.CrossTalk.Leaks) == 0 {
		t.Fatalf("verdict %s, cross-talk %+v", r.Verdict, r.CrossTalk)
	}
	if len(r.DivergentPaths) != 0 {
		t.Errorf("identical calls diverged at %v: the shared buffer holds the same text for all", r.DivergentPaths)
	}
	tests := r.Tests()
	if len(tests) != 2 || tests[1].Status != result.Failed || tests[0].Status != result.Passed {
		t.Errorf("test cases %v %v", tests[0].Status, tests[1].Status)
	}
}

func TestUnknownTool(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := race.Run(ctx, server(t, nil), &race.Options{Tool: "nope"}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("Run with an unknown tool: %v", err)
	}
}

func TestUnansweredUnderConcurrencyIsNoAnswer(t *testing.T) {
	// The server deadlocks once calls overlap: the concurrent calls time out, and so do the
	// control calls after them; those say nothing about what varies by design. Calls without
	// an answer are not a race: the verdict says so and points to the deadlock detector.
	srv := mcptest.NewTCPServer(&mcptest.Options{HangWhenConcurrent: true})
	t.Cleanup(srv.Close)
	dial, info, err := serverconn.SpecDial("tcp://"+srv.Addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	op := serverconn.New(serverconn.Options{Info: info, Dial: dial, Session: session.Options{ConnectTimeout: 10 * time.Second, RequestTimeout: 300 * time.Millisecond}})
	r := detecttest.Run(t, race.Run, op, &race.Options{Tool: "slow", Args: map[string]any{"milliseconds": 50}, Concurrency: 4, Rounds: 1, Sequential: 2, SkipCrossTalk: true})
	if r.Verdict != race.VerdictNoAnswer || r.Found() || r.Unanswered != 4 || !strings.Contains(r.Diagnosis, "mcpspec deadlock --tool slow") {
		t.Errorf("verdict %s, unanswered %d: %s", r.Verdict, r.Unanswered, r.Diagnosis)
	}
	if len(r.VolatilePaths) != 0 {
		t.Errorf("volatile paths %v: unanswered control calls must not count as variation", r.VolatilePaths)
	}
}

func TestGarbledAnswersAreNotARace(t *testing.T) {
	// Every 5th answer is truncated JSON: those calls got no answer, which is not a race.
	r := detecttest.Run(t, race.Run, server(t, &mcptest.Options{MalformedEvery: 5}), &race.Options{Tool: "echo", Args: map[string]any{"text": "hi"}, Concurrency: 8, Rounds: 2, SkipCrossTalk: true})
	if r.Verdict != race.VerdictMalformed || !r.Found() || len(r.DivergentPaths) != 0 || !strings.Contains(r.Diagnosis, "not a race") {
		t.Fatalf("verdict %s, divergent %v: %s", r.Verdict, r.DivergentPaths, r.Diagnosis)
	}
	tc := r.Tests()[0]
	if tc.Status != result.Failed || len(tc.Failures) == 0 || tc.Failures[0].Assertion != "malformed" {
		t.Errorf("test case %s with failures %+v", tc.Status, tc.Failures)
	}
}

// TestLostUpdates: add_note reads the shared store, works, and writes it back without a lock,
// so of concurrent adds only the last survives while every one answers "added". The read-back
// (list_notes, picked because it pairs with add_note) names each lost marker; the healthy twin,
// which locks, loses none.
func TestLostUpdates(t *testing.T) {
	o := &race.Options{Tool: "add_note", Args: map[string]any{"text": "n"}, Concurrency: 8, Rounds: 1, Sequential: 2, SkipCrossTalk: true}
	r := detecttest.Run(t, race.Run, server(t, &mcptest.Options{LostUpdates: true}), o)
	lu := r.LostUpdates
	if r.Verdict != race.VerdictRace || lu == nil || lu.Verdict != race.LostUpdateRace || len(lu.Lost) == 0 {
		t.Fatalf("verdict %s, lost updates %+v", r.Verdict, lu)
	}
	if lu.ReadBack != "list_notes" || !strings.Contains(lu.Picked, "picked list_notes") || lu.Succeeded != 8 {
		t.Errorf("read back with %q (%s), %d of %d writes succeeded", lu.ReadBack, lu.Picked, lu.Succeeded, lu.Writes)
	}
	if !strings.Contains(r.Diagnosis, "lost updates") || !strings.Contains(r.Diagnosis, lu.Lost[0].Marker) {
		t.Errorf("diagnosis %q does not name the lost marker %s", r.Diagnosis, lu.Lost[0].Marker)
	}
	tests := r.Tests()
	if last := tests[len(tests)-1]; last.Status != result.Failed || !strings.HasSuffix(last.ID, "/lost-updates") {
		t.Errorf("test case %s %s", last.ID, last.Status)
	}

	r = detecttest.Run(t, race.Run, server(t, &mcptest.Options{Notes: true}), o)
	if r.Verdict == race.VerdictRace || r.LostUpdates == nil || r.LostUpdates.Verdict != race.LostUpdateNone || r.LostUpdates.Succeeded != 8 {
		t.Errorf("healthy twin: verdict %s, lost updates %+v", r.Verdict, r.LostUpdates)
	}
	// Named explicitly, with arguments; a tool that is no write gets no read-back picked.
	r = detecttest.Run(t, race.Run, server(t, &mcptest.Options{Notes: true}), &race.Options{Tool: "add_note", Args: map[string]any{"text": "n"}, Concurrency: 4, Rounds: 1, Sequential: 2, SkipCrossTalk: true,
		ReadBack: "list_notes", ReadBackArgs: map[string]any{}})
	if r.LostUpdates == nil || r.LostUpdates.Picked != "" || r.LostUpdates.Verdict != race.LostUpdateNone {
		t.Errorf("--read-back list_notes: %+v", r.LostUpdates)
	}
	r = detecttest.Run(t, race.Run, server(t, &mcptest.Options{Notes: true}), &race.Options{Tool: "echo", Args: map[string]any{"text": "n"}, Concurrency: 4, Rounds: 1, Sequential: 2, SkipCrossTalk: true})
	if r.LostUpdates != nil {
		t.Errorf("echo got a read-back: %+v", r.LostUpdates)
	}
}
