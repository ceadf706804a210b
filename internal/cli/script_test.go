package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mcpspec/mcpspec/internal/golden"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// TestMain registers the commands the scripts run as real processes: mcpspec itself (this test
// binary dispatching on its name, so scripts run the real binary) and expect-exit.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"mcpspec":     Main,
		"expect-exit": expectExit,
	})
}

// expectExit is `expect-exit CODE PROGRAM ARGS…`: it runs the program with the same stdio and
// exits 0 when the program exited with CODE, 1 otherwise, so scripts can check exact exit codes
// and still match the program's stdout and stderr.
func expectExit() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: expect-exit CODE PROGRAM [ARGS…]")
		os.Exit(2)
	}
	want, err := strconv.Atoi(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "expect-exit: bad code %q\n", os.Args[1])
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[2], os.Args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err = cmd.Run()
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		fmt.Fprintf(os.Stderr, "expect-exit: %v\n", err)
		os.Exit(1)
	}
	if got != want {
		fmt.Fprintf(os.Stderr, "expect-exit: %s exited with %d, want %d\n", os.Args[2], got, want)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestScripts runs testdata/script/*.txtar against the real mcpspec binary.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		UpdateScripts:       golden.Update(),
		RequireExplicitExec: true,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"serve":    cmdServe,
			"serveweb": cmdServeWeb,
			"readme":   cmdReadme,
		},
		Condition: func(cond string) (bool, error) {
			name, ok := strings.CutPrefix(cond, "transport:")
			if !ok {
				return false, fmt.Errorf("unknown condition %q", cond)
			}
			return transportBuilt(spec.Transport(name)), nil
		},
	})
}

// transportBuilt reports whether this build can dial t.
func transportBuilt(t spec.Transport) bool {
	addr := map[spec.Transport]string{spec.HTTP: "http://127.0.0.1:1/mcp", spec.SSE: "http://127.0.0.1:1/sse", spec.WS: "ws://127.0.0.1:1/ws", spec.TCP: "tcp://127.0.0.1:1"}[t]
	if addr == "" {
		return true
	}
	_, _, err := spec.Parse(addr, &spec.Options{Transport: t})
	return !errors.Is(err, spec.ErrUnavailable)
}

// cmdServe is `serve TRANSPORT VAR [testserver flags…]`: it starts `mcpspec testserver
// --transport TRANSPORT --addr 127.0.0.1:0` in the background, waits (up to 10s) for the URL it
// prints, stores it in $VAR, and stops the server when the script ends. The server's stderr
// goes to $WORK/serve-VAR.stderr.
func cmdServe(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: serve TRANSPORT VAR [testserver flags…]")
	}
	transport, name := args[0], args[1]
	stderr, err := os.Create(filepath.Join(ts.Getenv("WORK"), "serve-"+name+".stderr"))
	ts.Check(err)
	cmd := exec.Command("mcpspec", append([]string{"testserver", "--transport", transport, "--addr", "127.0.0.1:0"}, args[2:]...)...)
	cmd.Dir = ts.Getenv("WORK")
	cmd.SysProcAttr = serveAttr()
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	ts.Check(err)
	ts.Check(cmd.Start())
	stopped := make(chan error, 1)
	ts.Defer(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-stopped:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-stopped
		}
		stderr.Close()
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			lines <- sc.Text()
		} else {
			lines <- ""
		}
		// Keep draining so the server never blocks on stdout.
		for sc.Scan() {
		}
		stopped <- cmd.Wait()
	}()
	select {
	case url := <-lines:
		if url == "" {
			ts.Fatalf("serve %s: the server printed no URL (see %s)", transport, stderr.Name())
		}
		ts.Setenv(name, url)
	case <-time.After(10 * time.Second):
		ts.Fatalf("serve %s: no URL within 10s", transport)
	}
}

// cmdServeWeb is `serveweb VAR STATUS`: it starts, in the test process, a plain web server on
// 127.0.0.1 that answers every request with an HTML page and STATUS (what a user gets when
// --server points at a web site instead of an MCP endpoint), stores its base URL in $VAR and
// stops it when the script ends.
func cmdServeWeb(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: serveweb VAR STATUS")
	}
	status, err := strconv.Atoi(args[1])
	ts.Check(err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, "<!DOCTYPE html><html><head><title>My Dashboard</title></head><body>hello</body></html>")
	}))
	ts.Defer(srv.Close)
	ts.Setenv(args[0], srv.URL)
}

// cmdReadme is `readme LANG TEXT FILE`: it writes the first ```LANG block that contains TEXT,
// in the repository's README.md or else in docs/*.md, to FILE in the script's work directory,
// so scripts run the documentation's examples as written.
func cmdReadme(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: readme LANG TEXT FILE")
	}
	docs, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	ts.Check(err)
	var text strings.Builder
	for _, name := range append([]string{filepath.Join("..", "..", "README.md")}, docs...) {
		b, err := os.ReadFile(name)
		ts.Check(err)
		text.Write(b)
		text.WriteString("\n")
	}
	fence := "```" + args[0] + "\n"
	for rest := text.String(); ; {
		i := strings.Index(rest, fence)
		if i < 0 {
			ts.Fatalf("README.md and docs/*.md have no %s block containing %q", args[0], args[1])
		}
		rest = rest[i+len(fence):]
		block, after, _ := strings.Cut(rest, "```")
		if strings.Contains(block, args[1]) {
			ts.Check(os.WriteFile(ts.MkAbs(args[2]), []byte(block), 0o644))
			return
		}
		rest = after
	}
}
