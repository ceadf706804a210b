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
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mcpspec/mcpspec/internal/golden"
	"github.com/mcpspec/mcpspec/internal/testparallel"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// TestMain registers the command the scripts run as a real process: mcpspec itself (this test
// binary dispatching on its name, so scripts run the real binary).
func TestMain(m *testing.M) {
	testscript.Main(raised{m}, map[string]func(){
		"mcpspec": Main,
	})
}

// raised runs the tests with -test.parallel raised (see [testparallel.Raise]): alone, the
// package used 104 s of CPU in 145 s of wall time at the default 2 (its scripts wait on
// servers, load durations and detector watches far more than they compute). It is raised in
// Run, which testscript.Main calls only in the test binary proper, never when the binary runs
// as one of the commands, whose arguments are not test flags.
type raised struct{ m *testing.M }

func (r raised) Run() int {
	testparallel.Raise(8)
	return r.m.Run()
}

// cmdExpectExit is `expect-exit CODE PROGRAM ARGS…`: it runs the program as exec does (its
// stdout and stderr are then what the script matches) and fails unless it exited with CODE,
// so scripts check exact exit codes. It runs in the test process: as a wrapper process of its
// own (this test binary again) it cost every checked command one more start of a 55 MB
// binary, about 30 ms of CPU, 400 times per run of the scripts.
func cmdExpectExit(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: expect-exit CODE PROGRAM [ARGS…]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("expect-exit: bad code %q", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("expect-exit: %v", err)
	}
	if got != want {
		ts.Fatalf("expect-exit: %s exited with %d, want %d", args[1], got, want)
	}
}

// TestScripts runs testdata/script/*.txtar against the real mcpspec binary.
func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		UpdateScripts:       golden.Update(),
		RequireExplicitExec: true,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"expect-exit": cmdExpectExit,
			"serve":       cmdServe,
			"serveweb":    cmdServeWeb,
			"readme":      cmdReadme,
			"readmeout":   cmdReadmeOut,
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
	block, _, err := docBlock(filepath.Join("..", ".."), args[0], args[1])
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), []byte(block), 0o644))
}

// cmdReadmeOut is `readmeout TEXT`: the first ```text block of the documentation (as for
// readme) that contains TEXT shows what the last command printed. Each of its lines must match
// a line of that command's stdout, or else of its stderr, in order within each stream, so the
// documentation can leave lines out; a line that is only "…" marks such a cut and is skipped.
// Numbers (with their units: 1.5ms, 27.0 MB, 100.2/s) and runs of blanks match any others, so
// timings and table widths may vary while the text around them may not; a line ending in "…"
// matches a line that starts with the rest.
func cmdReadmeOut(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: readmeout TEXT")
	}
	block, _, err := docBlock(filepath.Join("..", ".."), "text", args[0])
	ts.Check(err)
	if err := matchOutput(block, ts.ReadFile("stdout"), ts.ReadFile("stderr")); err != nil {
		ts.Fatalf("the documented output (the text block containing %q) drifted from the command's: %v", args[0], err)
	}
}

// matchOutput checks a documented output block against a command's stdout and stderr (see
// cmdReadmeOut) and names the first documented line that matches neither, in order.
func matchOutput(doc, stdout, stderr string) error {
	streams := [][]string{strings.Split(stdout, "\n"), strings.Split(stderr, "\n")}
	next := []int{0, 0}
	for _, line := range strings.Split(strings.TrimRight(doc, "\n"), "\n") {
		line = strings.TrimRight(line, " ")
		if line == "" || line == "…" {
			continue
		}
		re := outputLineRE(line)
		found := false
		for s, lines := range streams {
			for i := next[s]; i < len(lines); i++ {
				if re.MatchString(strings.TrimRight(lines[i], " ")) {
					next[s], found = i+1, true
					break
				}
			}
			if found {
				break
			}
		}
		if !found {
			return fmt.Errorf("no line after the previous match, on stdout or stderr, matches %q (as %s)\nstdout:\n%s\nstderr:\n%s", line, re, stdout, stderr)
		}
	}
	return nil
}

// numberRE is a number in documented output, with its unit if any.
const numberRE = `[0-9]+(?:\.[0-9]+)?(?:ns|µs|us|ms|s|m|h|%|/s| ?(?:B|KB|MB|GB|KiB|MiB|GiB))?`

// outputLineRE makes a documented output line into the regular expression an actual line must
// match: numbers (numberRE) match any number with any such unit, blanks any blanks, and a
// trailing "…" anything.
func outputLineRE(line string) *regexp.Regexp {
	prefix := false
	if rest, ok := strings.CutSuffix(line, "…"); ok && strings.TrimSpace(rest) != "" {
		line, prefix = rest, true
	}
	num := regexp.MustCompile(numberRE)
	var b strings.Builder
	b.WriteString("^")
	last := 0
	for _, m := range num.FindAllStringIndex(line, -1) {
		b.WriteString(blanks(regexp.QuoteMeta(line[last:m[0]])))
		b.WriteString(numberRE)
		last = m[1]
	}
	b.WriteString(blanks(regexp.QuoteMeta(line[last:])))
	if !prefix {
		b.WriteString("$")
	}
	return regexp.MustCompile(b.String())
}

// blanks makes every run of blanks in a quoted pattern match any run of blanks.
func blanks(quoted string) string {
	return regexp.MustCompile(` +`).ReplaceAllString(quoted, ` +`)
}

// docBlock returns the first ```lang block that contains text in root's README.md or else in
// its docs/*.md (in name order), and the file it is in.
func docBlock(root, lang, text string) (block, file string, err error) {
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return "", "", err
	}
	fence := "```" + lang + "\n"
	for _, name := range append([]string{filepath.Join(root, "README.md")}, docs...) {
		b, err := os.ReadFile(name)
		if err != nil {
			return "", "", err
		}
		for rest := string(b); ; {
			i := strings.Index(rest, fence)
			if i < 0 {
				break
			}
			rest = rest[i+len(fence):]
			block, after, _ := strings.Cut(rest, "```")
			if strings.Contains(block, text) {
				return block, name, nil
			}
			rest = after
		}
	}
	return "", "", fmt.Errorf("README.md and docs/*.md have no %s block containing %q", lang, text)
}
