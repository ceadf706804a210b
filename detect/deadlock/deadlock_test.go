package deadlock_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/detect"
	"github.com/mcpspec/mcpspec/detect/deadlock"
	"github.com/mcpspec/mcpspec/detect/internal/detecttest"
	"github.com/mcpspec/mcpspec/internal/testparallel"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// opener opens sessions to one SPEC.
func opener(t *testing.T, s string) *serverconn.Opener {
	t.Helper()
	return detecttest.Opener(t, s, session.Options{})
}

// tcpServer starts a reference server over TCP and returns its SPEC: every session shares it.
func tcpServer(t *testing.T, o *mcptest.Options) string {
	t.Helper()
	srv := mcptest.NewTCPServer(o)
	t.Cleanup(srv.Close)
	return "tcp://" + srv.Addr
}

// TestMain lets the tests overlap beyond GOMAXPROCS: they wait on the detector's timers and
// the reference server's delays, and compute next to nothing (0.3 s of CPU in 13-16 s).
func TestMain(m *testing.M) {
	testparallel.Raise(8)
	os.Exit(m.Run())
}

// freshServers returns an opener whose every session gets a reference server of its own, as
// a stdio server gets a process of its own.
func freshServers(t *testing.T, o *mcptest.Options) *serverconn.Opener {
	t.Helper()
	return serverconn.New(serverconn.Options{
		Dial: func(string) (transport.Dialer, error) {
			srv := mcptest.NewTCPServer(o)
			t.Cleanup(srv.Close)
			d, _, err := spec.Parse("tcp://"+srv.Addr, nil)
			return d, err
		},
		Session: session.Options{ConnectTimeout: 10 * time.Second},
	})
}

func TestHealthyServerHasNoDeadlockAndNoHang(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, spec string }{
		{"tcp", tcpServer(t, nil)},
		{"streamable http", func() string { s := mcptest.NewServer(nil); t.Cleanup(s.Close); return s.URL }()},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := detecttest.Run(t, deadlock.Run, opener(t, c.spec), nil)
			if r.Verdict != deadlock.VerdictClean || r.DeadlockCount != 0 || r.HangCount != 0 || r.Found() {
				t.Errorf("verdict %s, deadlock_count %d, hang_count %d; want clean, 0, 0", r.Verdict, r.DeadlockCount, r.HangCount)
			}
			probed := map[string]bool{}
			for _, p := range r.Probes {
				probed[p.Name] = true
				if p.Name != "tools/list race" && (len(p.Sequential) != deadlock.DefaultSequential || len(p.Concurrent) != deadlock.DefaultConcurrency) {
					t.Errorf("%s: %d sequential, %d concurrent calls", p.Name, len(p.Sequential), len(p.Concurrent))
				}
			}
			for _, want := range []string{"echo", "add", "slow", "error", "tools/list race"} {
				if !probed[want] {
					t.Errorf("%s not probed (probes: %v)", want, probed)
				}
			}
			for _, tc := range r.Tests() {
				if tc.Status != result.Passed {
					t.Errorf("test %s: %s", tc.Name, tc.Status)
				}
			}
		})
	}
}

func TestConcurrentOnlyHangIsADeadlockWithItsDiagnosis(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, spec string }{
		{"tcp", tcpServer(t, &mcptest.Options{HangWhenConcurrent: true})},
		{"streamable http", func() string {
			s := mcptest.NewServer(&mcptest.Options{HangWhenConcurrent: true})
			t.Cleanup(s.Close)
			return s.URL
		}()},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := detecttest.Run(t, deadlock.Run, opener(t, c.spec), &deadlock.Options{Tool: "slow", Args: map[string]any{"milliseconds": 50},
				HangAfter: 300 * time.Millisecond, Grace: 300 * time.Millisecond, Concurrency: 8,
				// On a shared server the list race would go first (TestLazyInitDeadlockOnASharedServer)
				// and wedge it before the control calls: this test is about the tool's own probe.
				SkipListRace: true})
			if r.Verdict != deadlock.VerdictDeadlock || !r.Found() {
				t.Fatalf("verdict %s, want deadlock", r.Verdict)
			}
			p := r.Probes[0]
			if want := "passes sequentially (3 of 3 answered"; !strings.Contains(p.Diagnosis, want) || !strings.Contains(p.Diagnosis, "deadlocks under 8 concurrent calls") {
				t.Errorf("diagnosis %q", p.Diagnosis)
			}
			if r.DeadlockCount < 2 || r.HangCount < r.DeadlockCount {
				t.Errorf("deadlock_count %d, hang_count %d", r.DeadlockCount, r.HangCount)
			}
			if !strings.Contains(p.AfterDeadlock, "ping answered") {
				t.Errorf("after the deadlock: %q, want ping still answered (only tools/call hangs)", p.AfterDeadlock)
			}
			tests := r.Tests()
			if tests[0].Status != result.Failed || len(tests[0].Failures) != 1 || !strings.Contains(tests[0].Failures[0].Actual, "deadlocked") {
				t.Errorf("test case %+v", tests[0])
			}
		})
	}
}

func TestLazyInitDeadlockShowsOnlyUnderConcurrency(t *testing.T) {
	t.Parallel()
	op := freshServers(t, &mcptest.Options{LazyInitDeadlock: 300 * time.Millisecond})
	r := detecttest.Run(t, deadlock.Run, op, &deadlock.Options{Tool: "echo", HangAfter: time.Second, Grace: 500 * time.Millisecond})
	if r.Verdict != deadlock.VerdictDeadlock {
		t.Fatalf("verdict %s, want deadlock", r.Verdict)
	}
	p := probeNamed(t, r, "echo")
	if c := detect.Count(p.Sequential); c.OK != 3 {
		t.Errorf("sequential calls %+v, want 3 answered", c)
	}
	if c := detect.Count(p.Concurrent); c.Deadlock != deadlock.DefaultConcurrency {
		t.Errorf("concurrent calls %+v, want all %d deadlocked", c, deadlock.DefaultConcurrency)
	}
	if p.ArgsFrom != "inputSchema" || p.Args["text"] != "mcpspec" {
		t.Errorf("args %v from %s, want made up from the inputSchema", p.Args, p.ArgsFrom)
	}
}

func TestSerializingServerIsSlowNotDeadlocked(t *testing.T) {
	t.Parallel()
	// One call at a time, 300ms each: 8 calls need 2.4s, far past 500ms + 500ms. The calls
	// given up are still not deadlocks: the server kept answering during their grace.
	s := tcpServer(t, &mcptest.Options{Serialize: true})
	r := detecttest.Run(t, deadlock.Run, opener(t, s), &deadlock.Options{Tool: "slow", Args: map[string]any{"milliseconds": 300},
		HangAfter: 500 * time.Millisecond, Grace: 500 * time.Millisecond, Concurrency: 8, SkipListRace: true})
	if r.Found() || r.DeadlockCount != 0 {
		t.Fatalf("verdict %s with %d deadlocks: a serializing server is not deadlocked", r.Verdict, r.DeadlockCount)
	}
	if r.SlowCount == 0 {
		t.Errorf("slow_count 0: the queued calls should count as slow")
	}
}

func TestUnknownToolAndSelection(t *testing.T) {
	t.Parallel()
	s := tcpServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := deadlock.Run(ctx, opener(t, s), &deadlock.Options{Tool: "nope"})
	if ute, ok := err.(*detect.UnknownToolError); !ok || len(ute.Available) == 0 {
		t.Fatalf("Run with an unknown tool: %v, want an UnknownToolError listing the tools", err)
	}
	r := detecttest.Run(t, deadlock.Run, opener(t, s), &deadlock.Options{Select: detect.Selection{Skip: []string{"slow", "flaky"}}, SkipListRace: true, Concurrency: 2})
	for _, p := range r.Probes {
		if p.Name == "slow" || p.Name == "flaky" || p.Name == "tools/list race" {
			t.Errorf("probed %s", p.Name)
		}
	}
	if len(r.Skipped) != 2 {
		t.Errorf("skipped %+v", r.Skipped)
	}
}

func TestCallThatHangsAloneIsAHang(t *testing.T) {
	t.Parallel()
	s := tcpServer(t, &mcptest.Options{HangFirstCall: true})
	r := detecttest.Run(t, deadlock.Run, opener(t, s), &deadlock.Options{Tool: "echo", HangAfter: 200 * time.Millisecond, Grace: 200 * time.Millisecond, SkipListRace: true})
	// The first tools/call of the server hangs even alone: a hang, not a deadlock, which
	// needs concurrency.
	if r.Verdict != deadlock.VerdictHang || r.Found() || !strings.Contains(r.Probes[0].Diagnosis, "even when called alone") {
		t.Errorf("verdict %s, diagnosis %q", r.Verdict, r.Probes[0].Diagnosis)
	}
}

// TestLazyInitDeadlockOnASharedServer: a network server initializes once, on its first calls,
// for every session. There the list race goes first, or the control calls would initialize
// the server and hide the deadlock.
func TestLazyInitDeadlockOnASharedServer(t *testing.T) {
	t.Parallel()
	s := tcpServer(t, &mcptest.Options{LazyInitDeadlock: 300 * time.Millisecond})
	r := detecttest.Run(t, deadlock.Run, opener(t, s), &deadlock.Options{Tool: "echo", HangAfter: time.Second, Grace: 500 * time.Millisecond})
	if r.Verdict != deadlock.VerdictDeadlock {
		t.Fatalf("verdict %s, want deadlock", r.Verdict)
	}
	p := r.Probes[0]
	if p.Name != "tools/list race" || p.Verdict != deadlock.VerdictDeadlock || !strings.Contains(p.Diagnosis, "right after the handshake") {
		t.Errorf("first probe %s: %s — %s; want the list race first, deadlocked", p.Name, p.Verdict, p.Diagnosis)
	}
}

// probeNamed returns the probe called name (a shared server's list race comes first).
func probeNamed(t *testing.T, r *deadlock.Report, name string) deadlock.Probe {
	t.Helper()
	for _, p := range r.Probes {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no probe %s among %d", name, len(r.Probes))
	return deadlock.Probe{}
}

// TestSlowAloneIsAHangNotADeadlock: a tool slower by design than the hang threshold plus
// grace is unanswered in time even alone: a hang or a slow tool, not a deadlock.
func TestSlowAloneIsAHangNotADeadlock(t *testing.T) {
	t.Parallel()
	r := detecttest.Run(t, deadlock.Run, freshServers(t, nil), &deadlock.Options{Tool: "slow", Args: map[string]any{"milliseconds": 1500},
		Concurrency: 4, HangAfter: 100 * time.Millisecond, Grace: 100 * time.Millisecond, SkipListRace: true})
	if r.Verdict != deadlock.VerdictHang || r.Found() || len(r.Probes) != 1 {
		t.Fatalf("verdict %s (found %v), %d probes; want hang, not found", r.Verdict, r.Found(), len(r.Probes))
	}
	p := r.Probes[0]
	if p.Verdict != deadlock.VerdictHang || !strings.Contains(p.Diagnosis, "not a deadlock") || !strings.Contains(p.Diagnosis, "raise --hang-after") {
		t.Errorf("probe %s: %s", p.Verdict, p.Diagnosis)
	}
	if tc := r.Tests()[0]; tc.Status != result.Errored || tc.Error == nil || tc.Error.Category != result.Hang {
		t.Errorf("test case %s %+v, want errored as a Hang", tc.Status, tc.Error)
	}
}

// TestNothingCalledIsNotTested: a server that marks every tool destructive gets no call, and
// the report says it tested nothing and how to opt in, rather than "no deadlock".
func TestNothingCalledIsNotTested(t *testing.T) {
	t.Parallel()
	r := detecttest.Run(t, deadlock.Run, opener(t, tcpServer(t, &mcptest.Options{AllDestructive: true})), nil)
	if r.Verdict != deadlock.VerdictNotTested || r.Found() || len(r.Probes) != 0 || r.OKCount != 0 {
		t.Fatalf("verdict %s, %d probes, ok %d; want not tested, no probe", r.Verdict, len(r.Probes), r.OKCount)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "nothing was tested") || !strings.Contains(r.Notes[0], "--include-destructive") {
		t.Errorf("notes %q", r.Notes)
	}
	var b strings.Builder
	_ = r.WriteText(&b)
	if !strings.Contains(b.String(), "NOT TESTED") || strings.Contains(b.String(), "No deadlock") {
		t.Errorf("text:\n%s", b.String())
	}
	// Opting in calls them.
	r = detecttest.Run(t, deadlock.Run, opener(t, tcpServer(t, &mcptest.Options{AllDestructive: true})), &deadlock.Options{Tool: "echo", Concurrency: 2, SkipListRace: true})
	if r.Verdict != deadlock.VerdictClean {
		t.Errorf("with --tool: verdict %s", r.Verdict)
	}
}

// TestLostResponseIsNotADeadlock: a server without an event store that ends each call's SSE
// stream before the answer loses the answer; its session goes on answering ping. That is a
// lost response, not a deadlock, and the probe goes on with the other tools of the shared
// server.
func TestLostResponseIsNotADeadlock(t *testing.T) {
	t.Parallel()
	srv := mcptest.NewServer(&mcptest.Options{SSEResponses: true, DropSSEAfter: 1, NoEventStore: true, Era: mcptest.EraLegacy})
	t.Cleanup(srv.Close)
	r := detecttest.Run(t, deadlock.Run, opener(t, srv.URL), &deadlock.Options{Concurrency: 4, HangAfter: 2 * time.Second, Grace: 2 * time.Second, SkipListRace: true})
	if r.Verdict != deadlock.VerdictLost || !r.Found() || r.DeadlockCount != 0 || r.LostCount == 0 {
		t.Fatalf("verdict %s, deadlock_count %d, lost_count %d; want a lost response, no deadlock", r.Verdict, r.DeadlockCount, r.LostCount)
	}
	for _, s := range r.Skipped {
		if strings.Contains(s.Reason, "not probed") {
			t.Errorf("%s skipped: %s", s.Tool, s.Reason)
		}
	}
	if len(r.Probes) < 3 {
		t.Errorf("%d probes: the probe stopped early", len(r.Probes))
	}
	if p := r.Probes[0]; p.Verdict != deadlock.VerdictLost || !strings.Contains(p.Diagnosis, "lost response") {
		t.Errorf("%s: %s %s", p.Name, p.Verdict, p.Diagnosis)
	}
}
