//go:build linux

package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/session/transport/stdio"
)

// noisyServer writes 3 MB of stderr before serving.
const noisyServer = `sh -c 'yes "a line of server noise on stderr" | head -c 3000000 >&2; exec mcpspec testserver'`

// noisyCollection runs one test against noisyServer; %s is what the echo must contain.
const noisyCollection = `name: Noisy
server: "sh noisy.sh"
tests:
  - name: Echo
    call: echo
    with: {text: hi}
    expect: [contains: %s]
`

// checkStderrFile checks that a saved stderr file is bounded, marks what it dropped and is
// readable by its owner only.
func checkStderrFile(t *testing.T, path string) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatalf("stderr file: %v", err)
	}
	if max := int64(stdio.StderrHead + 2*stdio.StderrTail + 200); st.Size() > max {
		t.Errorf("%s is %d bytes, over %d", path, st.Size(), max)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", path, st.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), "bytes of stderr dropped here") {
		t.Errorf("%s lacks the marker of what was dropped", path)
	}
}

// TestServerStderrIsBounded: 3 MB of server stderr leave a bounded file, readable by its owner
// only, that a passing run removes (unless --keep-stderr) and a failing run keeps.
func TestServerStderrIsBounded(t *testing.T) {
	tests := []struct {
		name      string
		expect    string
		args      []string
		code      ExitCode
		keepsFile bool
	}{
		{"passing run", "hi", nil, ExitOK, false},
		{"passing run, --keep-stderr", "hi", []string{"--keep-stderr"}, ExitOK, true},
		{"failing run", "bye", nil, ExitFailure, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFile(t, dir, "noisy.sh", strings.TrimSuffix(strings.TrimPrefix(noisyServer, "sh -c '"), "'"))
			writeFile(t, dir, "noisy.yaml", fmt.Sprintf(noisyCollection, tt.expect))
			p := startMcpspec(t, dir, append([]string{"test", "noisy.yaml", "--reporter", "json=r.json"}, tt.args...)...)
			if code := p.wait(t, 60*time.Second); code != int(tt.code) {
				t.Fatalf("exit code = %d, want %d\nstderr:\n%s", code, tt.code, p.stderr.String())
			}
			files, _ := filepath.Glob(filepath.Join(dir, runStderrDir, "*"))
			var run result.Run
			b, err := os.ReadFile(filepath.Join(dir, "r.json"))
			if err != nil || json.Unmarshal(b, &run) != nil || len(run.Collections) != 1 || len(run.Collections[0].Servers) != 1 {
				t.Fatalf("JSON report: %v\n%s", err, b)
			}
			recorded := run.Collections[0].Servers[0].StderrPath
			if !tt.keepsFile {
				if len(files) != 0 || recorded != "" {
					t.Errorf("after a passing run: stderr files %v, report points at %q; want none", files, recorded)
				}
				return
			}
			if len(files) != 1 || recorded == "" {
				t.Fatalf("stderr files %v, report points at %q; want one, named in the report", files, recorded)
			}
			checkStderrFile(t, filepath.Join(dir, recorded))
		})
	}
}

// TestCallStderrIsBounded: --stderr FILE is bounded and private too.
func TestCallStderrIsBounded(t *testing.T) {
	dir := t.TempDir()
	p := startMcpspec(t, dir, "call", "--server", noisyServer, "--stderr", "s.log", "echo", "--args", `{"text":"hi"}`)
	if code := p.wait(t, 60*time.Second); code != int(ExitOK) {
		t.Fatalf("exit code = %d\nstderr:\n%s", code, p.stderr.String())
	}
	checkStderrFile(t, filepath.Join(dir, "s.log"))
}
