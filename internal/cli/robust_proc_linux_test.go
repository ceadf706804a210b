//go:build linux

package cli

// Helpers of the robustness tests: run the real mcpspec binary as a child process, watch its
// output as it comes, and find every process it started — even one reparented after its
// parent died — through an environment marker.

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/poll"
)

// markerEnv is set, with a value unique to one run, in the environment of the mcpspec process
// under test. Every process it starts inherits it, so a leftover can be found in /proc even
// after it was reparented to init.
const markerEnv = "MCPSPEC_ROBUST_MARKER"

// syncBuffer is a bytes.Buffer safe for one writer (the exec package's copier) and readers.
type syncBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// mcpspecProc is one run of the real binary.
type mcpspecProc struct {
	cmd    *exec.Cmd
	marker string
	stdout syncBuffer
	stderr syncBuffer
	exited chan struct{}
	err    error // Wait's result; read after exited is closed
}

// startMcpspec starts `mcpspec args…` in dir with the marker in its environment. The process
// is killed (and its leftovers reported) when the test ends, if it is still running then.
func startMcpspec(t *testing.T, dir string, args ...string) *mcpspecProc {
	t.Helper()
	exe, err := exec.LookPath("mcpspec")
	if err != nil {
		t.Fatalf("mcpspec not installed by TestMain: %v", err)
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	p := &mcpspecProc{marker: hex.EncodeToString(b[:]), exited: make(chan struct{})}
	p.cmd = exec.Command(exe, args...)
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), markerEnv+"="+p.marker, "NO_COLOR=1")
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	// Grandchildren inherit the output pipes: Wait must not block on them once mcpspec exited.
	p.cmd.WaitDelay = 5 * time.Second
	// mcpspec dies with the test binary even if the test is killed.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start mcpspec %s: %v", strings.Join(args, " "), err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		for _, pid := range p.leftovers() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return p
}

// signal sends sig to the mcpspec process.
func (p *mcpspecProc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v: %v", sig, err)
	}
}

// wait waits up to d for mcpspec to exit and returns its exit code; it fails the test (with
// the output so far) when mcpspec is still running after d.
func (p *mcpspecProc) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.exited: // checked first: with d = 0 a select would pick either case at random
	default:
		select {
		case <-p.exited:
		case <-time.After(d):
			t.Fatalf("mcpspec %s still running after %v\nstdout:\n%s\nstderr:\n%s",
				strings.Join(p.cmd.Args[1:], " "), d, tail(p.stdout.String()), tail(p.stderr.String()))
		}
	}
	var ee *exec.ExitError
	switch {
	case p.err == nil:
		return 0
	case errors.As(p.err, &ee) && ee.Exited():
		return ee.ExitCode()
	}
	t.Fatalf("mcpspec did not exit normally: %v\nstderr:\n%s", p.err, tail(p.stderr.String()))
	return -1
}

// waitOutput waits up to d until the combined output satisfies cond.
func (p *mcpspecProc) waitOutput(t *testing.T, d time.Duration, what string, cond func(stdout, stderr string) bool) {
	t.Helper()
	exited := false
	poll.Within(d, func() bool {
		select {
		case <-p.exited:
			exited = true
		default:
		}
		return exited || cond(p.stdout.String(), p.stderr.String())
	})
	switch {
	case cond(p.stdout.String(), p.stderr.String()):
	case exited:
		t.Fatalf("mcpspec exited (%v) before %s\nstdout:\n%s\nstderr:\n%s", p.err, what, tail(p.stdout.String()), tail(p.stderr.String()))
	default:
		t.Fatalf("timed out after %v waiting for %s\nstdout:\n%s\nstderr:\n%s", d, what, tail(p.stdout.String()), tail(p.stderr.String()))
	}
}

// leftovers lists the live processes (not zombies) carrying this run's marker, other than
// mcpspec itself.
func (p *mcpspecProc) leftovers() []int {
	want := []byte(markerEnv + "=" + p.marker + "\x00")
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == p.cmd.Process.Pid || !alive(pid) {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(env, want) {
			out = append(out, pid)
		}
	}
	return out
}

// assertNoLeftovers fails the test when a process mcpspec started is still alive once mcpspec
// exited. Processes killed by mcpspec may take a moment to be reaped by init, so it waits up to
// two seconds for them to go.
func (p *mcpspecProc) assertNoLeftovers(t *testing.T) {
	t.Helper()
	var left []int
	if poll.Within(2*time.Second, func() bool { left = p.leftovers(); return len(left) == 0 }) {
		return
	}
	var desc []string
	for _, pid := range left {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		desc = append(desc, fmt.Sprintf("%d: %s", pid, bytes.ReplaceAll(bytes.TrimRight(cmdline, "\x00"), []byte{0}, []byte{' '})))
	}
	t.Errorf("processes started by mcpspec outlived it:\n  %s", strings.Join(desc, "\n  "))
}

// assertNoPanic fails the test when stderr shows a Go panic or a goroutine dump.
func assertNoPanic(t *testing.T, stderr string) {
	t.Helper()
	for _, s := range []string{"panic:", "goroutine ", "fatal error:", "[signal "} {
		if strings.Contains(stderr, s) {
			t.Errorf("stderr shows a crash of mcpspec (%q):\n%s", s, tail(stderr))
			return
		}
	}
}

// tail returns the last 4 KiB of s.
func tail(s string) string {
	const n = 4096
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// optionalTool finds a consumer program on PATH. When it is missing the check is skipped
// (logged), unless MCPSPEC_CONSUMERS=1 asks for every consumer: then the test fails.
func optionalTool(t *testing.T, name string) (string, bool) {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p, true
	}
	if os.Getenv("MCPSPEC_CONSUMERS") == "1" {
		t.Fatalf("%s is required when MCPSPEC_CONSUMERS=1: %v", name, err)
	}
	t.Logf("%s not installed: its check is skipped (MCPSPEC_CONSUMERS=1 requires it)", name)
	return "", false
}

// writeFile writes data to dir/name and returns the path.
func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
