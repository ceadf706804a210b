//go:build unix

package resources_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary act as a process the tests sample: it reads commands, one
// per line, from stdin and answers each with "ok" (or "error ..."); it exits at EOF.
//
//	ping          nothing (answers once the helper runs)
//	alloc N       allocate N MiB and touch every page, kept until exit
//	burn MS       spin until this process has used MS more milliseconds of CPU
//	fds N         open /dev/null N times, kept open
//	spawn K MIB   start K helpers of its own that each allocate MIB MiB first
const helperEnv = "RESOURCES_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		os.Exit(helperMain(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

// retained keeps the helper's allocations and files reachable.
var retained []any

func helperMain(in io.Reader, out io.Writer) int {
	sc := bufio.NewScanner(in)
	var kids []*helper
	defer func() {
		for _, k := range kids {
			k.stop()
		}
	}()
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		arg := func(i int) int {
			if i >= len(f) {
				return 0
			}
			n, _ := strconv.Atoi(f[i])
			return n
		}
		switch f[0] {
		case "ping":
		case "alloc":
			allocTouch(arg(1))
		case "burn":
			burn(time.Duration(arg(1)) * time.Millisecond)
		case "fds":
			for range arg(1) {
				fd, err := os.Open(os.DevNull)
				if err != nil {
					fmt.Fprintln(out, "error", err)
					continue
				}
				retained = append(retained, fd)
			}
		case "spawn":
			for range arg(1) {
				k, err := startHelper()
				if err == nil {
					kids = append(kids, k)
					err = k.send("ping")
				}
				if err == nil && arg(2) > 0 {
					err = k.send(fmt.Sprintf("alloc %d", arg(2)))
				}
				if err != nil {
					fmt.Fprintln(out, "error", err)
					return 1
				}
			}
		default:
			fmt.Fprintln(out, "error unknown command", f[0])
			continue
		}
		fmt.Fprintln(out, "ok")
	}
	return 0
}

func allocTouch(mib int) {
	b := make([]byte, mib<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	retained = append(retained, b)
}

// burn spins until the process's CPU time grew by d.
func burn(d time.Duration) {
	start := processCPU()
	x := 0
	for processCPU()-start < d {
		for i := range 100000 {
			x += i
		}
	}
	retained = append(retained, x)
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// helper is a running helper process.
type helper struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	done chan struct{}
}

// answerWait bounds every wait for a helper's answer.
const answerWait = 30 * time.Second

func startHelper() (*helper, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = helperAttr()
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	h := &helper{cmd: cmd, in: in, out: bufio.NewReader(out), done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(h.done) }()
	return h, nil
}

// send writes a command and waits for its answer.
func (h *helper) send(line string) error {
	if _, err := fmt.Fprintln(h.in, line); err != nil {
		return err
	}
	got := make(chan string, 1)
	go func() {
		s, _ := h.out.ReadString('\n')
		got <- strings.TrimSpace(s)
	}()
	select {
	case s := <-got:
		if s != "ok" {
			return fmt.Errorf("helper answered %q to %q", s, line)
		}
		return nil
	case <-time.After(answerWait):
		h.kill()
		return fmt.Errorf("helper did not answer %q within %v", line, answerWait)
	}
}

// stop closes the helper's stdin and waits for it to exit, killing it after a while.
func (h *helper) stop() {
	_ = h.in.Close()
	select {
	case <-h.done:
	case <-time.After(10 * time.Second):
		h.kill()
	}
}

func (h *helper) kill() {
	_ = h.cmd.Process.Kill()
	<-h.done
}

func (h *helper) pid() int { return h.cmd.Process.Pid }

// newHelper starts a helper that the test stops at its end.
func newHelper(tb testing.TB) *helper {
	tb.Helper()
	h, err := startHelper()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(h.stop)
	h.must(tb, "ping")
	return h
}

func (h *helper) must(tb testing.TB, line string) {
	tb.Helper()
	if err := h.send(line); err != nil {
		tb.Fatal(err)
	}
}
