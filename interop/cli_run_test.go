//go:build linux

package interop

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/cli"
	"github.com/mcpspec/mcpspec/internal/poll"
)

// Running the CLI in-process, and checking that no process it started outlives it.

// markerVar marks, in their environment, every process one mcpspec run starts.
const markerVar = "MCPSPEC_INTEROP_MARKER"

func newMarker() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// assertNoMarkedProcesses fails the test when a live process still carries marker once the
// mcpspec run that set it exited (waiting up to two seconds for killed ones to be reaped).
func assertNoMarkedProcesses(t *testing.T, marker string) {
	t.Helper()
	want := []byte(markerVar + "=" + marker + "\x00")
	var left []int
	if !poll.Within(2*time.Second, func() bool {
		left = nil
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if st, err := readStat(pid); err != nil || st.state == "Z" {
				continue
			}
			if env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ")); err == nil && bytes.Contains(env, want) {
				left = append(left, pid)
			}
		}
		return len(left) == 0
	}) {
		t.Errorf("processes started by mcpspec outlived it: %v", left)
	}
}

// cliRun is one run of the mcpspec CLI.
type cliRun struct {
	code   cli.ExitCode
	stdout []byte
	stderr string
}

// runCLI runs mcpspec with args, bounded by limit. A server it starts gets a marker in its
// environment, by which the test checks afterwards that no such process is left.
func runCLI(t *testing.T, limit time.Duration, args ...string) cliRun {
	t.Helper()
	return startCLI(t, limit, args...)(t)
}

// startCLI is runCLI begun now, in the background, and judged later: the returned function
// waits for the run and makes runCLI's checks (the bound kept, no process left behind) on
// the test it is given. A test that starts a long, mostly waiting run this way before its
// parallel subtests queue for a slot does not leave it to start last. t waits for the run
// before its cleanup, whether or not it was judged.
func startCLI(t *testing.T, limit time.Duration, args ...string) func(*testing.T) cliRun {
	t.Helper()
	marker := newMarker()
	if i := slices.Index(args, "--server"); i >= 0 && i+1 < len(args) && !strings.HasPrefix(args[i+1], "http") {
		args = append(args, "--server-env", markerVar+"="+marker)
	}
	tmp := t.TempDir()
	type result struct {
		run      cliRun
		outlived bool
	}
	done := make(chan result, 1)
	finished := make(chan struct{})
	t.Cleanup(func() { <-finished })
	go func() {
		defer close(finished)
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		var stdout, stderr bytes.Buffer
		code := cli.Run(ctx, append([]string{"mcpspec"}, args...), &cli.IO{Stdin: bytes.NewReader(nil), Stdout: &stdout, Stderr: &stderr, TempDir: tmp, NoHistory: true})
		done <- result{cliRun{code: code, stdout: stdout.Bytes(), stderr: stderr.String()}, ctx.Err() != nil}
	}()
	return func(t *testing.T) cliRun {
		t.Helper()
		r := <-done
		if r.outlived {
			t.Errorf("mcpspec %s outlived its %v bound", args[0], limit)
		}
		assertNoMarkedProcesses(t, marker)
		return r.run
	}
}

// decode reads the run's --json report into v, failing the test with its stderr otherwise.
func (r cliRun) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.stdout, v); err != nil {
		t.Fatalf("exit %d, no JSON report (%v)\nstdout: %.2000s\nstderr: %.4000s", r.code, err, r.stdout, r.stderr)
	}
}

// wantExit fails the test unless the run exited with want.
func (r cliRun) wantExit(t *testing.T, want cli.ExitCode) {
	t.Helper()
	if r.code != want {
		t.Errorf("exit %d, want %d\nstderr: %.4000s", r.code, want, r.stderr)
	}
}
