//go:build linux

package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: the master end to read what a program writes, the
// terminal end to give it as its stdio. Nothing ever answers on the master: a program that
// queries the terminal (cursor position, background colour) and waits for the answer stalls.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	var n int
	var ctlErr error
	rc, _ := master.SyscallConn()
	if err := rc.Control(func(fd uintptr) {
		if ctlErr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); ctlErr == nil {
			n, ctlErr = unix.IoctlGetInt(int(fd), unix.TIOCGPTN)
		}
	}); err != nil || ctlErr != nil {
		t.Fatalf("unlock the pseudo-terminal: %v %v", err, ctlErr)
	}
	tty, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close() })
	return master, tty
}

// firstLineBound is how long a verb may take to print its first line on a terminal in this
// test. It is a behaviour check, not a benchmark (BenchmarkStartup in cmd/mcpspec measures):
// generous for a loaded machine, but a verb that waits on a terminal query waits for ever
// here, so the bug fails by design.
const firstLineBound = 2 * time.Second

// exitBound is how long a program may take to end after its first line before it is killed.
const exitBound = 10 * time.Second

// TestFirstLineOnTerminal runs verbs with stdin, stdout and stderr all on a pseudo-terminal
// that answers nothing (its controlling terminal, as in an interactive shell) and reads their
// first line within firstLineBound. No verb may write an escape sequence before it: a query
// would, and would then wait for an answer.
func TestFirstLineOnTerminal(t *testing.T) {
	bin, err := exec.LookPath("mcpspec")
	if err != nil {
		t.Fatalf("mcpspec is not on PATH (TestMain puts it there): %v", err)
	}
	for _, args := range [][]string{
		{"version"},
		{"--help"},
		{"tools", "--server", "testserver"},
		{"call", "--server", "testserver", "echo", "--args", `{"text":"hi"}`},
		{"read", "--server", "testserver", "mcptest://static/hello.txt"},
		{"scenarios"},
	} {
		t.Run(strings.Join(args[:1], " "), func(t *testing.T) {
			t.Parallel()
			line, took, err := firstLineOnTerminal(t, bin, args...)
			if err != nil {
				t.Fatalf("mcpspec %s: %v", strings.Join(args, " "), err)
			}
			if i := bytes.IndexByte(line, 0x1b); i >= 0 {
				t.Errorf("mcpspec %s wrote an escape sequence before its first line (a terminal query?): %q", strings.Join(args, " "), line)
			}
			t.Logf("first line after %s: %q", took.Round(time.Millisecond), line)
		})
	}
}

// errStalled is a program printing no line on the terminal within firstLineBound.
var errStalled = errors.New("no line on the terminal in time (waiting on the terminal?)")

// firstLineOnTerminal runs bin with args, stdin, stdout and stderr on a pseudo-terminal that
// is its controlling terminal and answers nothing, and returns its first line and when it came,
// or errStalled when none came within firstLineBound.
func firstLineOnTerminal(t *testing.T, bin string, args ...string) (line []byte, took time.Duration, err error) {
	t.Helper()
	master, tty := openPTY(t)
	cmd := exec.Command(bin, args...)
	cmd.Dir = t.TempDir()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.Env = append(os.Environ(), "TERM=xterm-256color", "COLORTERM=truecolor")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		// Let the program finish (its own server children go with it), reading what it still
		// writes; kill it only if it stalled or does not end in time.
		if errors.Is(err, errStalled) {
			_ = cmd.Process.Kill()
		}
		_ = master.SetReadDeadline(time.Now().Add(exitBound))
		for {
			if _, err := master.Read(make([]byte, 4096)); err != nil {
				break
			}
		}
		done := make(chan struct{})
		timer := time.AfterFunc(exitBound, func() { _ = cmd.Process.Kill() })
		defer timer.Stop()
		go func() { _ = cmd.Wait(); close(done) }()
		<-done
	}()
	tty.Close() // the child holds it now; its exit then ends the master's reads with EIO
	if err := master.SetReadDeadline(start.Add(firstLineBound)); err != nil {
		t.Fatalf("pseudo-terminal master without deadlines: %v", err)
	}
	var got []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(got, []byte("\n")) {
		n, rerr := master.Read(buf)
		got = append(got, buf[:n]...)
		if errors.Is(rerr, os.ErrDeadlineExceeded) {
			return got, time.Since(start), fmt.Errorf("%w: it wrote %q", errStalled, got)
		}
		if rerr != nil {
			break // EIO: the program exited
		}
	}
	took = time.Since(start)
	line, _, ok := bytes.Cut(got, []byte("\n"))
	if !ok || len(bytes.TrimSpace(line)) == 0 {
		return got, took, fmt.Errorf("no first line on the terminal: %q", got)
	}
	return line, took, nil
}

// TestFirstLineCatchesStall proves the check above fails by design on the bug it guards
// against: a program that asks the terminal for the cursor position and waits for the answer
// before its first line.
func TestFirstLineCatchesStall(t *testing.T) {
	t.Parallel()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	_, _, err = firstLineOnTerminal(t, sh, "-c", `printf '\033[6n'; read -r answer; echo "first line"`)
	if !errors.Is(err, errStalled) {
		t.Errorf("a program waiting on a terminal query was not caught: %v", err)
	}
}
