package fuzz

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"sync"
	"syscall"
	"testing"

	"github.com/mcpspec/mcpspec/internal/testparallel"
	"github.com/mcpspec/mcpspec/mcptest"
)

// TestMain lets the test binary act as two servers, so tests run them as real child processes
// whose crashes are real exits:
//
//   - `testserver FLAGS…`: mcpspec testserver (a "testserver" SPEC with this binary as the
//     executable);
//   - `closer MODE`: the reference server behind a line filter that ends the process on the
//     first line that is not JSON, as some SDKs do: MODE clean exits 1 with a plain message,
//     trace exits 1 after a Python-style traceback, status2 exits 2;
//   - `latecrash`: the reference server behind a line filter that lets a tools/call holding a
//     lone high surrogate through, and the line after it, then dies with a Node-style crash
//     report when the second line after it arrives: the crash of a Node server whose handler
//     answered but left a timer that throws, which lands after the fuzzer's liveness ping;
//   - `strayonce MARKER`: the reference server that, in its first life only (while the file
//     MARKER does not exist), writes a stray `{}` line after the fourth line it reads: a frame
//     the run sees once and never again (server-everything's `{}` events over Streamable HTTP);
//   - `crashafter N`: the reference server that dies with a Node-style crash report when the
//     Nth tools/call of its life arrives, whatever its arguments;
//   - `stdoutlog`: the reference server that logs a line of plain text to stdout for every
//     tools/call (a code runner's console.log), whatever its arguments;
//   - `rewriteid`: the reference server behind a filter that gives every request whose id is
//     not a plain integer the id 424242, so it is answered under an id nobody sent.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		defer stop()
		switch os.Args[1] {
		case "testserver":
			os.Exit(mcptest.RunCommand(ctx, os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
		case "closer":
			os.Exit(closer(ctx, os.Args[2]))
		case "latecrash":
			os.Exit(lateCrasher(ctx))
		case "strayonce":
			os.Exit(strayOnce(ctx, os.Args[2]))
		case "crashafter", "stdoutlog", "rewriteid":
			os.Exit(filtered(ctx, os.Args[1], os.Args[2:]))
		}
	}
	// The tests wait on servers and on the fuzzer's hang and liveness watches far more than
	// they compute (10 s of CPU in 88 s of wall time): let them overlap.
	testparallel.Raise(8)
	os.Exit(m.Run())
}

// closer is the `closer MODE` server.
func closer(ctx context.Context, mode string) int {
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		for sc.Scan() {
			line := sc.Bytes()
			if !json.Valid(line) {
				switch mode {
				case "trace":
					fmt.Fprint(os.Stderr, "Traceback (most recent call last):\n  File \"server.py\", line 3, in read\nValueError: bad JSON\n")
					os.Exit(1)
				case "status2":
					os.Exit(2)
				default:
					fmt.Fprintln(os.Stderr, "closing: the client sent a line that is not JSON")
					os.Exit(1)
				}
			}
			_, _ = pw.Write(append(line, '\n'))
		}
		_ = pw.Close()
	}()
	if err := mcptest.ServeStdio(ctx, pr, os.Stdout, &mcptest.Options{Era: mcptest.EraLegacy}); err != nil {
		return 2
	}
	return 0
}

// lateCrasher is the `latecrash` server.
func lateCrasher(ctx context.Context) int {
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		countdown := 0
		for sc.Scan() {
			line := sc.Bytes()
			if countdown > 0 {
				if countdown--; countdown == 0 {
					fmt.Fprint(os.Stderr, "file:///srv/notify.mjs:12\nURIError: URI malformed\n    at encodeURIComponent (<anonymous>)\n    at Timeout._onTimeout (file:///srv/notify.mjs:12:24)\n\nNode.js v20.20.2\n")
					os.Exit(1)
				}
			}
			if bytes.Contains(line, []byte(`"tools/call"`)) && bytes.Contains(line, []byte(`\ud800`)) {
				countdown = 2
			}
			_, _ = pw.Write(append(line, '\n'))
		}
		_ = pw.Close()
	}()
	if err := mcptest.ServeStdio(ctx, pr, os.Stdout, &mcptest.Options{Era: mcptest.EraLegacy}); err != nil {
		return 2
	}
	return 0
}

// strayOnce is the `strayonce MARKER` server.
func strayOnce(ctx context.Context, marker string) int {
	first := false
	if f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600); err == nil {
		first = true
		f.Close()
	}
	out := &lockedWriter{w: os.Stdout}
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		n := 0
		for sc.Scan() {
			_, _ = pw.Write(append(sc.Bytes(), '\n'))
			if n++; first && n == 4 {
				_, _ = out.Write([]byte("{}\n"))
			}
		}
		_ = pw.Close()
	}()
	if err := mcptest.ServeStdio(ctx, pr, out, &mcptest.Options{Era: mcptest.EraLegacy}); err != nil {
		return 2
	}
	return 0
}

// lockedWriter serialises writes, so a line written from outside the server never lands
// inside one of its frames.
type lockedWriter struct {
	mu sync.Mutex // guards w
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// filtered runs the `crashafter N`, `stdoutlog` and `rewriteid` servers.
func filtered(ctx context.Context, mode string, args []string) int {
	limit := 0
	if mode == "crashafter" {
		fmt.Sscanf(args[0], "%d", &limit)
	}
	out := &lockedWriter{w: os.Stdout}
	plainID := regexp.MustCompile(`^-?[0-9]+$`)
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		calls := 0
		for sc.Scan() {
			line := sc.Bytes()
			var m map[string]json.RawMessage
			isCall := json.Unmarshal(line, &m) == nil && string(m["method"]) == `"tools/call"`
			switch {
			case mode == "crashafter" && isCall:
				if calls++; calls == limit {
					fmt.Fprint(os.Stderr, "file:///srv/counter.mjs:7\nRangeError: quota exceeded after 4 runs\n    at run (file:///srv/counter.mjs:7:11)\n\nNode.js v20.20.2\n")
					os.Exit(1)
				}
			case mode == "stdoutlog" && isCall:
				_, _ = out.Write([]byte("Running the code...\n"))
			case mode == "rewriteid" && m != nil && m["method"] != nil && m["id"] != nil && !plainID.Match(m["id"]):
				m["id"] = json.RawMessage(`424242`)
				line, _ = json.Marshal(m)
			}
			_, _ = pw.Write(append(line, '\n'))
		}
		_ = pw.Close()
	}()
	if err := mcptest.ServeStdio(ctx, pr, out, &mcptest.Options{Era: mcptest.EraLegacy}); err != nil {
		return 2
	}
	return 0
}
