package headofline_test

import (
	"os"
	"strings"
	"testing"

	"github.com/mcpspec/mcpspec/detect/headofline"
	"github.com/mcpspec/mcpspec/detect/internal/detecttest"
	"github.com/mcpspec/mcpspec/internal/testparallel"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

func server(t *testing.T, o *mcptest.Options) *serverconn.Opener {
	t.Helper()
	srv := mcptest.NewServer(o)
	t.Cleanup(srv.Close)
	return detecttest.Opener(t, srv.URL, session.Options{})
}

// TestMain lets the tests overlap beyond GOMAXPROCS: they wait on the detector's timers and
// the reference server's delays, and compute next to nothing (0.3 s of CPU in 13-16 s).
func TestMain(m *testing.M) {
	testparallel.Raise(8)
	os.Exit(m.Run())
}

// slowEcho is the check the tests make: echo behind slow(300ms).
func slowEcho(o *headofline.Options) *headofline.Options {
	o.SlowTool, o.SlowArgs = "slow", map[string]any{"milliseconds": 300}
	o.FastTool, o.FastArgs = "echo", map[string]any{"text": "fast"}
	o.Rounds = 3
	return o
}

func TestSerializingServerIsFlagged(t *testing.T) {
	t.Parallel()
	r := detecttest.Run(t, headofline.Run, server(t, &mcptest.Options{Serialize: true}), slowEcho(&headofline.Options{}))
	if r.Verdict != headofline.VerdictSerializes || !r.Found() {
		t.Fatalf("verdict %s: %s", r.Verdict, r.Diagnosis)
	}
	if p := r.Phases[0]; p.Inflation < headofline.DefaultThreshold || p.BlockedRounds*2 <= p.ValidRounds {
		t.Errorf("phase with one slow call: %+v", p)
	}
	if tc := r.Tests()[0]; tc.Status != result.Failed || len(tc.Failures) != 1 {
		t.Errorf("test case %s %+v", tc.Status, tc.Failures)
	}
}

func TestConcurrentServerIsNotFlagged(t *testing.T) {
	t.Parallel()
	r := detecttest.Run(t, headofline.Run, server(t, nil), slowEcho(&headofline.Options{}))
	if r.Verdict != headofline.VerdictConcurrent || r.Found() {
		t.Fatalf("verdict %s: %s", r.Verdict, r.Diagnosis)
	}
	// A round may be slow on a loaded machine; most must not be.
	for _, p := range r.Phases {
		if p.Blocked || p.BlockedRounds*2 > p.ValidRounds {
			t.Errorf("phase %+v blocked", p)
		}
	}
	if tc := r.Tests()[0]; tc.Status != result.Passed {
		t.Errorf("test case %s", tc.Status)
	}
}

func TestSmallWorkerPoolSaturates(t *testing.T) {
	t.Parallel()
	r := detecttest.Run(t, headofline.Run, server(t, &mcptest.Options{Workers: 2}), slowEcho(&headofline.Options{SlowConcurrency: 3}))
	if r.Verdict != headofline.VerdictSaturates || !r.Found() {
		t.Fatalf("verdict %s: %s", r.Verdict, r.Diagnosis)
	}
}

func TestSlowCallThatIsNotSlowIsInconclusive(t *testing.T) {
	t.Parallel()
	r := detecttest.Run(t, headofline.Run, server(t, nil), &headofline.Options{SlowTool: "echo", FastTool: "echo", Rounds: 2})
	if r.Verdict != headofline.VerdictInconclusive || r.Found() || !strings.Contains(r.Diagnosis, "pick a slower call") {
		t.Errorf("verdict %s: %s", r.Verdict, r.Diagnosis)
	}
	if tc := r.Tests()[0]; tc.Status != result.Errored {
		t.Errorf("test case %s", tc.Status)
	}
}

// A serializing network server is checked from a second session too: a global one-at-a-time
// server makes that session wait as well; one that runs each session's calls in order lets it
// past. A process per session (stdio) is not checked: its sessions share nothing.
func TestSerializingScope(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		o    *mcptest.Options
		want headofline.Scope
	}{
		{"global", &mcptest.Options{Serialize: true, Era: mcptest.EraLegacy}, headofline.ScopeServer},
		{"per session", &mcptest.Options{SerializeSession: true, Era: mcptest.EraLegacy}, headofline.ScopeSession},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := detecttest.Run(t, headofline.Run, server(t, c.o), slowEcho(&headofline.Options{SlowConcurrency: 1}))
			if r.Verdict != headofline.VerdictSerializes {
				t.Fatalf("verdict %s: %s", r.Verdict, r.Diagnosis)
			}
			if r.Scope != c.want || len(r.Phases) != 2 || !r.Phases[1].OtherSession {
				t.Errorf("scope %q (note %q), %d phases; want %q and a cross-session phase\n%s", r.Scope, r.ScopeNote, len(r.Phases), c.want, r.Diagnosis)
			}
			if !strings.Contains(r.Diagnosis, "another session") {
				t.Errorf("diagnosis does not say what the other session saw: %s", r.Diagnosis)
			}
		})
	}
}
