package loadgen

import (
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/threshold"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/result"
)

// firstCrash is the index of the first tools/call on which `testserver --crash-rate rate
// --seed seed` crashes: every fresh process counts its calls from 1, so it crashes once
// per that many calls it takes up, whatever the load.
func firstCrash(t *testing.T, seed string, rate float64) int64 {
	t.Helper()
	for n := int64(1); n < 10000; n++ {
		if mcptest.FlakyRoll(seed, n) < rate {
			return n
		}
	}
	t.Fatal("no crash in 10000 calls")
	return 0
}

// A server that crashes once per k calls, loaded at a rate that leaves calls in flight at each
// crash and queues more behind each restart: the crash rate is one per k calls the server took
// up, and the calls lost to the crashes and restarts are counted apart (they were 24–38 % of
// the calls against a true rate of 2 %, and the run passed). The verdict is the same when the
// dead server is reaped late (--crash-linger: its pipes close 300ms before it exits, as on a
// loaded machine): a call sent in between met a broken pipe and was counted Disconnected, the
// calls in flight Cancelled, and the crash not at all (0 crashes; on a box at load 15–35 the
// crash gate passed).
func TestCrashRatePerCallTakenUp(t *testing.T) {
	t.Parallel()
	k := firstCrash(t, "7", 0.05)
	if k < 5 || k > 60 {
		t.Fatalf("seed 7 crashes at call %d: pick a seed whose first crash is between 5 and 60", k)
	}
	for _, tc := range []struct{ name, flags string }{
		{"reaped at once", ""},
		{"reaped late", " --crash-linger 300ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := processServer(t, "--crash-rate 0.05 --seed 7 --delay 5ms"+tc.flags)
			res := runCfg(t, &Config{Server: srv, Rate: 200, Duration: 3 * time.Second, Workload: echoWorkload(), Seed: 1})
			r := res.Run
			c := r.Crashes
			if c.Count < 3 || r.Errors.ByCategory[result.Crash] == 0 {
				t.Fatalf("crashes %+v, errors %+v: want several", c, r.Errors.ByCategory)
			}
			if n := r.Errors.ByCategory[result.Disconnected]; n != 0 {
				t.Errorf("errors %+v: %d calls to a crashed server counted Disconnected", r.Errors.ByCategory, n)
			}
			if c.LostToRestarts == 0 {
				t.Errorf("crashes %+v: at 200/s with 5ms calls some are in flight at each crash, none counted lost", c)
			}
			if c.LiveRequests+c.LostToRestarts != r.Throughput.TotalRequests {
				t.Errorf("crashes %+v, requests %d: live + lost must be every request", c, r.Throughput.TotalRequests)
			}
			// Each process takes up k calls and crashes on the k-th, dropping with it the one or
			// two it was still delaying (5ms each at 200/s); the last process adds the calls it
			// took up before the run ended. So about k live calls per crash, not many more.
			per := float64(c.LiveRequests) / float64(c.Count)
			t.Logf("first crash at call %d; %+v; errors %v; %d requests, %.0f taken up per crash", k, c, r.Errors.ByCategory, r.Throughput.TotalRequests, per)
			if per < float64(k-3) || per > float64(k)*1.5+2 {
				t.Errorf("%d calls taken up per crash (crashes %+v), want about %d", int(per), c, k)
			}
			if r.Passed {
				t.Error("a run in which the server crashed passed")
			}
			if g := threshold.FailedGates(r); len(g) != 1 || g[0].Name != "crash" {
				t.Errorf("failed gates %+v, want crash alone", g)
			}
		})
	}
}

// The orderly twin: a server that closes its pipes and exits 0 (a shutdown mid-run, not a
// crash) at the same calls, just as late, left: its calls are Disconnected and lost, no crash.
func TestCleanExitMidRunIsNoCrash(t *testing.T) {
	t.Parallel()
	srv := processServer(t, "--crash-rate 0.05 --seed 7 --delay 5ms --crash-linger 300ms --crash-exit 0")
	res := runCfg(t, &Config{Server: srv, Rate: 200, Duration: 2 * time.Second, Workload: echoWorkload(), Seed: 1})
	r := res.Run
	t.Logf("crashes %+v; errors %v", r.Crashes, r.Errors.ByCategory)
	if c := r.Crashes; c.Count != 0 || r.Errors.ByCategory[result.Crash] != 0 {
		t.Errorf("crashes %+v, errors %v: a server that exits 0 did not crash", c, r.Errors.ByCategory)
	}
	if r.Errors.ByCategory[result.Disconnected] == 0 || r.Crashes.LostToRestarts == 0 {
		t.Errorf("crashes %+v, errors %v: want the calls of each shutdown Disconnected and lost", r.Crashes, r.Errors.ByCategory)
	}
	for _, g := range threshold.FailedGates(r) {
		if g.Name == "crash" {
			t.Errorf("the crash gate failed on a server that never crashed: %+v", g)
		}
	}
}

// The healthy twin: no crash, nothing lost, the run passes.
func TestCrashRateHealthy(t *testing.T) {
	t.Parallel()
	srv := processServer(t, "--delay 5ms")
	res := runCfg(t, &Config{Server: srv, Rate: 200, Duration: 2 * time.Second, Workload: echoWorkload(), Seed: 1})
	r := res.Run
	if c := r.Crashes; c.Count != 0 || c.LostToRestarts != 0 || c.LiveRequests != r.Throughput.TotalRequests {
		t.Errorf("crashes %+v on a healthy server", c)
	}
	if !r.Passed || len(r.Gates) != 5 {
		t.Errorf("passed %v, gates %+v", r.Passed, r.Gates)
	}
}
