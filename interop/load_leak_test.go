//go:build linux

package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/cli"
	"github.com/mcpspec/mcpspec/loadgen/leak"
	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// TestLoadLeakVerdictCLI runs `mcpspec load` itself — resource sampling of the spawned
// process tree and the leak analysis with its defaults — on the reference server keeping
// 16 KiB per call and on server-everything from npm, under the same soak. The Node server must
// never be called a leak. The reference server's steady growth is a leak once 10,000 calls
// have been made after the warm-up (leak.DefaultMinCalls; 16 KiB per call is below the 32 KiB
// that are named a leak at once), and fails the run by the leak gate; before, the analysis says
// "indeterminate" and asks for a longer run, as it must, since a healthy V8 heap grows just as
// steadily over its first thousands of calls. The default soak is short (8 s at 400/s:
// indeterminate); MCPSPEC_LEAK_SOAK=40s reaches the verdict (both servers soaked at once).
func TestLoadLeakVerdictCLI(t *testing.T) {
	t.Parallel()
	p := requireNodePeer(t, everythingPkg)
	soak, rate := 8*time.Second, 400.0
	if d, err := time.ParseDuration(os.Getenv("MCPSPEC_LEAK_SOAK")); err == nil && d > 0 {
		soak = d
	}
	flags := []string{"--scenario", "soak", "--rate", strconv.FormatFloat(rate, 'f', -1, 64) + "/s", "--duration", soak.String(),
		"--iterations", strconv.Itoa(int(rate * soak.Seconds())), "--sample-interval", "200ms", "--progress", "off", "--json"}
	cases := []struct {
		name, server string
		env          []string
		args         string
		reference    bool
	}{
		{name: "testserver --leak-kb 16", server: "testserver --leak-kb 16", args: `{"text":"hello"}`, reference: true},
		{name: "server-everything", server: spec.Join([]string{p.node, p.entry, "stdio"}), env: peerEnvExtra, args: `{"message":"hello"}`},
	}
	runs := make([]*metrics.Run, len(cases))
	outs := make([]string, len(cases))
	codes := make([]cli.ExitCode, len(cases))
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Go(func() {
			argv := append([]string{"mcpspec", "load", "--server", c.server, "--tool", "echo", "--args", c.args, "--out", t.TempDir(), "--run-id", "r"}, flags...)
			for _, e := range c.env {
				argv = append(argv, "--env", e)
			}
			ctx, cancel := context.WithTimeout(context.Background(), soak+90*time.Second)
			defer cancel()
			var stdout, stderr bytes.Buffer
			code := cli.Run(ctx, argv, &cli.IO{Stdin: bytes.NewReader(nil), Stdout: &stdout, Stderr: &stderr, TempDir: t.TempDir(), NoHistory: true})
			outs[i], codes[i] = "exit "+strconv.Itoa(int(code))+"\n"+stderr.String(), code
			var run metrics.Run
			// A leak verdict fails the run by the leak gate (exit 1), with metrics.json printed.
			if (code == cli.ExitOK || code == cli.ExitFailure) && json.Unmarshal(stdout.Bytes(), &run) == nil {
				runs[i] = &run
			}
		})
	}
	wg.Wait()
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runs[i]
			if r == nil {
				t.Fatalf("no run: %s", outs[i])
			}
			if r.Errors.Total > 0 {
				t.Fatalf("%d of %d calls failed: %+v", r.Errors.Total, r.Throughput.TotalRequests, r.Errors.ByCategory)
			}
			if leaked := r.Leak != nil && r.Leak.Verdict == string(leak.Leak); leaked != (codes[i] == cli.ExitFailure) {
				t.Errorf("leak verdict %v but %s", r.Leak, outs[i])
			}
			p, s, lk := r.Process, r.Sampling, r.Leak
			if p == nil || len(p.Samples) < 10 || s == nil || !strings.HasPrefix(s.Source, "process tree of pid ") || lk == nil {
				t.Fatalf("process %v, sampling %+v, leak %+v", p != nil, s, lk)
			}
			after := p.Samples[len(p.Samples)-1].Calls - callsAt(p.Samples, lk.WarmupSecs)
			t.Logf("%d calls (%d after the %.1fs warm-up), RSS %.1f → %.1f MB: %s — %s; slope %.3f MB/s, R² %.2f, %.2f KB/call",
				r.Throughput.TotalRequests, after, lk.WarmupSecs, p.Samples[0].RSSMB, p.FinalRSSMB, lk.Verdict, lk.Reason, lk.SlopeMBPerSec, lk.R2, lk.KBPerCall)
			if !c.reference {
				if lk.Verdict == string(leak.Leak) {
					t.Errorf("a healthy Node server called a leak: %s", lk.Reason)
				}
				return
			}
			if lk.SlopeMBPerSec <= 0 || lk.R2 < leak.DefaultMinR2 || lk.KBPerCall < 8 {
				t.Errorf("the reference leak was not seen: slope %v MB/s, R² %v, %v KB/call", lk.SlopeMBPerSec, lk.R2, lk.KBPerCall)
			}
			switch want := string(leak.Leak); {
			case after >= leak.DefaultMinCalls+int64(rate):
				if lk.Verdict != want {
					t.Errorf("verdict %s (%s) after %d calls, want %s", lk.Verdict, lk.Reason, after, want)
				}
			case after < leak.DefaultMinCalls-int64(rate):
				if lk.Verdict != string(leak.Indeterminate) || !strings.Contains(lk.Reason, "run longer") {
					t.Errorf("verdict %s (%s) after %d calls, want indeterminate: run longer", lk.Verdict, lk.Reason, after)
				}
			}
		})
	}
}

// callsAt returns the calls finished at the first sample at or after secs.
func callsAt(s []metrics.ResourceSample, secs float64) int64 {
	for _, x := range s {
		if x.T >= secs {
			return x.Calls
		}
	}
	return 0
}
