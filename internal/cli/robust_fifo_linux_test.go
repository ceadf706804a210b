//go:build linux

package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/poll"
)

// mkfifo makes a named pipe at dir/name.
func mkfifo(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// holdOpen opens a named pipe for reading and writing (which never blocks on Linux) and keeps
// it open for the test: mcpspec then sees a writer that never writes.
func holdOpen(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
}

// hasOpen reports whether process pid has path open.
func hasOpen(pid int, path string) bool {
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, fd := range fds {
		if target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && target == path {
			return true
		}
	}
	return false
}

const goodCollection = "name: Good\nserver: testserver\ntests:\n  - name: Echo\n    call: echo\n    with: {text: hi}\n"

// TestNamedPipesAreRefused: a named pipe where a collection, a directory's collection or a
// snapshot file is expected is refused at once with its name, whether or not a writer holds
// it; it used to block mcpspec forever.
func TestNamedPipesAreRefused(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		args  []string
		code  ExitCode
		want  string
	}{
		{"validate a pipe", func(t *testing.T, dir string) { mkfifo(t, dir, "c.yaml") },
			[]string{"validate", "c.yaml"}, ExitConfig, `(?m)^Error: c\.yaml is a named pipe, not a regular file$`},
		{"test a pipe with a silent writer", func(t *testing.T, dir string) { holdOpen(t, mkfifo(t, dir, "c.yaml")) },
			[]string{"test", "c.yaml"}, ExitConfig, `(?m)^Error: c\.yaml is a named pipe, not a regular file$`},
		{"a pipe in a directory of collections", func(t *testing.T, dir string) {
			mkfifo(t, dir, "cols/b.yaml")
			writeFile(t, filepath.Join(dir, "cols"), "a.yaml", goodCollection)
		}, []string{"test", "cols"}, ExitConfig, `(?m)^Error: cols/b\.yaml is a named pipe, not a regular file$`},
		{"a snapshot that is a pipe", func(t *testing.T, dir string) {
			writeFile(t, dir, "s.yaml", goodCollection+"    assertions: [{type: snapshot, name: snap}]\n")
			mkfifo(t, dir, "__snapshots__/snap.json")
		}, []string{"test", "s.yaml"}, ExitFailure, `__snapshots__/snap\.json is a named pipe, not a regular file`},
		{"--env-file a directory", func(t *testing.T, dir string) { writeFile(t, dir, "c.yaml", goodCollection) },
			[]string{"test", "c.yaml", "--env-file", "."}, ExitConfig, `(?m)^Error: cannot read --env-file \.: \. is a directory, not a regular file$`},
		{"--args @ a directory", func(t *testing.T, dir string) {},
			[]string{"call", "--server", "testserver", "echo", "--args", "@."}, ExitConfig, `(?m)^Error: cannot read --args @\.: \. is a directory, not a regular file$`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			tt.setup(t, dir)
			p := startMcpspec(t, dir, tt.args...)
			code := p.wait(t, sweepBound)
			out := p.stdout.String() + p.stderr.String()
			if code != int(tt.code) || !regexp.MustCompile(tt.want).MatchString(out) {
				t.Errorf("exit %d, want %d with output matching %s\nstdout:\n%s\nstderr:\n%s", code, tt.code, tt.want, tail(p.stdout.String()), tail(p.stderr.String()))
			}
			assertNoPanic(t, p.stderr.String())
			p.assertNoLeftovers(t)
		})
	}
}

// TestInterruptWhileReadingAPipe: --env-file and --args @FILE may be pipes (a shell's <(…)),
// so mcpspec waits for their writer; SIGINT and SIGTERM end that wait (exit 130), which they
// used not to.
func TestInterruptWhileReadingAPipe(t *testing.T) {
	tests := []struct {
		name string
		sig  syscall.Signal
		args []string
	}{
		{"--env-file SIGINT", syscall.SIGINT, []string{"test", "c.yaml", "--env-file", "p.env"}},
		{"--env-file SIGTERM", syscall.SIGTERM, []string{"validate", "c.yaml", "--env-file", "p.env"}},
		{"--args @ SIGINT", syscall.SIGINT, []string{"call", "--server", "testserver", "echo", "--args", "@p.env"}},
		{"load --args @ SIGTERM", syscall.SIGTERM, []string{"load", "--server", "testserver", "--tool", "echo", "--args", "@p.env", "--duration", "1s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFile(t, dir, "c.yaml", goodCollection)
			holdOpen(t, mkfifo(t, dir, "p.env"))
			p := startMcpspec(t, dir, tt.args...)
			// Once it has the pipe open it handles signals (a signal before that would kill it).
			poll.Until(t, 15*time.Second, "mcpspec to open the pipe", func() bool {
				return hasOpen(p.cmd.Process.Pid, filepath.Join(dir, "p.env"))
			})
			p.signal(t, tt.sig)
			if code := p.wait(t, 15*time.Second); code != int(ExitInterrupted) {
				t.Errorf("exit code = %d, want %d\nstderr:\n%s", code, ExitInterrupted, p.stderr.String())
			}
			assertNoPanic(t, p.stderr.String())
			p.assertNoLeftovers(t)
		})
	}
}
