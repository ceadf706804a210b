//go:build unix

package stdio

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeEnv makes the test binary act as a fake server: it runs its arguments as a script.
const fakeEnv = "MCPSPEC_STDIO_FAKE"

func TestMain(m *testing.M) {
	if os.Getenv(fakeEnv) == "1" {
		fake(os.Args[1:])
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeServer returns a Command running the fake server with the given script.
func fakeServer(script ...string) Command {
	return Command{
		Path: os.Args[0],
		Args: script,
		// The race runtime sleeps a second at exit unless told not to.
		Env: []string{fakeEnv + "=1", "GORACE=atexit_sleep_ms=0"},
		// Long enough for a loaded machine: a well-behaved fake never waits them out. Tests
		// of escalation shorten them.
		Grace:     3 * time.Second,
		TermGrace: 3 * time.Second,
	}
}

// fake runs a script of steps, in order:
//
//	echo            copy stdin lines to stdout until EOF
//	wait-eof        read stdin until EOF
//	print:TEXT      write TEXT and a newline to stdout
//	stderr:TEXT     write TEXT and a newline to stderr
//	stderr-lines:N  write N numbered lines to stderr
//	long:N          write a line of N bytes
//	bad-utf8        write a line that is not UTF-8
//	truncated       write a line without its newline
//	env:KEY         print the value of KEY
//	pwd             print the working directory
//	ignore-term     ignore SIGTERM
//	grandchild      start a sleeping grandchild with no stdio, print {"grandchild":PID}
//	grandchild-out  the same, but the grandchild keeps our stdout and stderr open
//	orphan          start `setsid sleep 300` through a shell that exits at once, so the sleep
//	                leaves our session and group and loses us as its parent; print {"grandchild":PID}
//	bare-setsid     start `sleep 300` in a session of its own with an empty environment (only
//	                its parent links it to us); print {"grandchild":PID}
//	close-stdio     close stdin and stdout (the process lives on: a crash not yet reaped)
//	sleep:DUR       sleep
//	exit:N          exit with code N
//	kill-self       die by SIGKILL
func fake(script []string) {
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for _, step := range script {
		name, arg, _ := strings.Cut(step, ":")
		switch name {
		case "echo":
			out.Flush()
			sc := bufio.NewScanner(os.Stdin)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				out.Write(sc.Bytes())
				out.WriteByte('\n')
				out.Flush()
			}
		case "wait-eof":
			out.Flush()
			buf := make([]byte, 4096)
			for {
				if _, err := os.Stdin.Read(buf); err != nil {
					break
				}
			}
		case "print":
			fmt.Fprintln(out, arg)
		case "stderr":
			fmt.Fprintln(os.Stderr, arg)
		case "stderr-lines":
			n, _ := strconv.Atoi(arg)
			w := bufio.NewWriter(os.Stderr)
			for i := range n {
				fmt.Fprintf(w, "stderr line %d\n", i)
			}
			w.Flush()
		case "long":
			n, _ := strconv.Atoi(arg)
			out.WriteString(strings.Repeat("x", n) + "\n")
		case "bad-utf8":
			out.WriteString("{\"s\":\"\xff\xfe\"}\n")
		case "truncated":
			out.WriteString(`{"id":1`)
		case "env":
			fmt.Fprintln(out, os.Getenv(arg))
		case "pwd":
			wd, _ := os.Getwd()
			fmt.Fprintln(out, wd)
		case "ignore-term":
			signal.Ignore(syscall.SIGTERM)
		case "grandchild", "grandchild-out":
			cmd := exec.Command(os.Args[0], "sleep:60s")
			if name == "grandchild-out" {
				cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
			}
			if err := cmd.Start(); err != nil {
				fmt.Fprintln(os.Stderr, "fake: grandchild:", err)
				os.Exit(99)
			}
			fmt.Fprintf(out, "{\"grandchild\":%d}\n", cmd.Process.Pid)
		case "orphan":
			b, err := exec.Command("sh", "-c", "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!").Output()
			pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil || perr != nil {
				fmt.Fprintln(os.Stderr, "fake: orphan:", err, perr)
				os.Exit(99)
			}
			fmt.Fprintf(out, "{\"grandchild\":%d}\n", pid)
		case "bare-setsid":
			cmd := exec.Command("sleep", "300")
			cmd.Env = []string{}
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if err := cmd.Start(); err != nil {
				fmt.Fprintln(os.Stderr, "fake: bare-setsid:", err)
				os.Exit(99)
			}
			fmt.Fprintf(out, "{\"grandchild\":%d}\n", cmd.Process.Pid)
		case "close-stdio":
			out.Flush()
			os.Stdin.Close()
			os.Stdout.Close()
		case "sleep":
			out.Flush()
			d, _ := time.ParseDuration(arg)
			time.Sleep(d)
		case "exit":
			out.Flush()
			n, _ := strconv.Atoi(arg)
			os.Exit(n)
		case "kill-self":
			out.Flush()
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			time.Sleep(10 * time.Second)
		default:
			fmt.Fprintf(os.Stderr, "fake: unknown step %q\n", step)
			os.Exit(98)
		}
		out.Flush()
	}
}
