//go:build linux

package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startupBound is how long a verb may take to print its help under a pseudo-terminal. It is a
// behaviour check, not a benchmark: the bug it guards against is a 5 s stall (a colour and
// cursor query that a terminal which does not answer leaves to time out), and the machine
// running the tests may be loaded.
const startupBound = 2 * time.Second

// underPTY runs shell command line under script(1) from util-linux, which gives it a
// pseudo-terminal that answers no queries (as CI runners and editors often do), and returns the
// transcript of the terminal and how long it took. It skips the test when script is missing.
func underPTY(t *testing.T, dir, line string) (transcript []byte, took time.Duration, err error) {
	t.Helper()
	script, lerr := exec.LookPath("script")
	if lerr != nil {
		t.Skip("script(1) from util-linux is not installed: cannot check the verbs under a pseudo-terminal")
	}
	typescript := filepath.Join(dir, "typescript")
	cmd := exec.Command(script, "-q", "-e", "-c", line, typescript)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(nil)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took = time.Since(start)
	return out, took, err
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestVerbsUnderPseudoTerminal is the CI check of issue 16: every verb starts in well under a
// second under a pseudo-terminal, writes no escape sequence when it has nothing live to show,
// and its --json output, piped, parses. Before the fix every invocation stalled 5 s on a
// terminal query and wrote ESC]11;? ESC[6n first.
func TestVerbsUnderPseudoTerminal(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("mcpspec")
	if err != nil {
		t.Fatalf("mcpspec is not on PATH (TestMain puts it there): %v", err)
	}
	a := newApp(&IO{})
	var verbs [][]string
	for _, c := range a.root().Commands {
		verbs = append(verbs, []string{c.Name})
		for _, s := range c.Commands {
			verbs = append(verbs, []string{c.Name, s.Name})
		}
	}
	verbs = append(verbs, nil) // the root itself: mcpspec --help
	for _, v := range verbs {
		name := strings.Join(v, " ")
		if name == "" {
			name = "(root)"
		}
		t.Run("help/"+name, func(t *testing.T) {
			line := shellQuote(bin)
			for _, w := range v {
				line += " " + shellQuote(w)
			}
			out, took, err := underPTY(t, t.TempDir(), line+" --help")
			if err != nil {
				t.Fatalf("%s --help under a pseudo-terminal: %v\n%s", name, err, out)
			}
			if took > startupBound {
				t.Errorf("%s --help took %s under a pseudo-terminal, want under %s (a terminal query?)", name, took, startupBound)
			}
			if i := bytes.IndexByte(out, 0x1b); i >= 0 {
				t.Errorf("%s --help wrote an escape sequence to the terminal: %q", name, out[i:min(len(out), i+16)])
			}
		})
	}

	// Verbs with --json, stdout piped (as in `mcpspec tools --json | jq`), stderr the terminal.
	jsonRuns := [][]string{
		{"version", "--json"},
		{"tools", "--server", "testserver", "--json"},
		{"call", "--server", "testserver", "echo", "--args", `{"text":"hi"}`, "--json"},
		{"read", "--server", "testserver", "mcptest://static/hello.txt", "--json"},
		{"tokens", "--server", "testserver", "--json"},
		{"score", "--server", "testserver", "--json"},
		{"scenarios", "--json"},
		{"audit", "--server", "testserver", "--json"},
		{"deadlock", "--server", "testserver", "--tool", "echo", "--concurrency", "2", "--json"},
		{"race", "--server", "testserver", "--tool", "echo", "--concurrency", "2", "--rounds", "2", "--json"},
		{"load", "--server", "testserver", "--tool", "echo", "--args", `{"text":"hi"}`, "--duration", "1s", "--rate", "20", "--json"},
	}
	for _, args := range jsonRuns {
		t.Run("json/"+strings.Join(args[:1], " "), func(t *testing.T) {
			dir := t.TempDir()
			line := shellQuote(bin)
			for _, w := range args {
				line += " " + shellQuote(w)
			}
			line += " | cat > out.json"
			tr, _, err := underPTY(t, dir, line)
			if err != nil {
				t.Fatalf("%s under a pseudo-terminal: %v\n%s", line, err, tr)
			}
			out, err := os.ReadFile(filepath.Join(dir, "out.json"))
			if err != nil {
				t.Fatal(err)
			}
			if i := bytes.IndexByte(out, 0x1b); i >= 0 {
				t.Errorf("an escape sequence reached the pipe: %q", out[i:min(len(out), i+16)])
			}
			var v any
			if err := json.Unmarshal(out, &v); err != nil {
				t.Errorf("--json output piped from a pseudo-terminal does not parse: %v\n%s", err, out)
			}
			// The verbs that work for a while show a live line on the terminal (stderr); the
			// others write no escape sequence at all.
			if live := map[string]bool{"load": true, "deadlock": true, "race": true, "score": true}; !live[args[0]] {
				if i := bytes.IndexByte(tr, 0x1b); i >= 0 {
					t.Errorf("%s wrote an escape sequence to the terminal: %q", args[0], tr[i:min(len(tr), i+16)])
				}
			}
		})
	}
}

// TestLoadLiveViewUnderPseudoTerminal: with stderr a terminal (tmux, script), --progress auto
// shows the live view, which clears every line it redraws. Before the fix it asked the
// masking writer over stderr, never a terminal, and printed plain lines.
func TestLoadLiveViewUnderPseudoTerminal(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("mcpspec")
	if err != nil {
		t.Fatalf("mcpspec is not on PATH: %v", err)
	}
	dir := t.TempDir()
	line := shellQuote(bin) + " load --server testserver --tool echo --args '{\"text\":\"hi\"}' --duration 2s --rate 20 --out run > summary.txt"
	tr, _, err := underPTY(t, dir, line)
	if err != nil {
		t.Fatalf("load under a pseudo-terminal: %v\n%s", err, tr)
	}
	if !bytes.Contains(tr, []byte(ansiClearEOL)) || !bytes.Contains(tr, []byte("mcpspec load · ")) {
		t.Errorf("no live view on the terminal; it showed:\n%q", tr)
	}
	if out, _ := os.ReadFile(filepath.Join(dir, "summary.txt")); bytes.IndexByte(out, 0x1b) >= 0 {
		t.Errorf("an escape sequence reached the redirected stdout: %q", out)
	}
}
