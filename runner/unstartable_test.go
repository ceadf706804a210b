package runner_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/runner"
)

// TestServerThatCannotStart: a server whose program is missing, or a Node server missing a
// module, is started once; the first test says why (the module or program named), and the
// others are not run, pointing at it, instead of repeating the same crash.
func TestServerThatCannotStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	starts := filepath.Join(dir, "starts")
	script := filepath.Join(dir, "server.js")
	// Counts its starts, then needs a module that is not installed.
	js := `require("fs").appendFileSync(process.argv[2], "x"); require("mcpspec-no-such-module");`
	if err := os.WriteFile(script, []byte(js), 0o600); err != nil {
		t.Fatal(err)
	}
	type server struct {
		name, spec string
		msg        []string // in the first test's error message
		count      bool     // the server counts its starts in the file starts
	}
	servers := []server{
		{"missing program", "mcpspec-no-such-program-4711 --stdio", []string{"cannot start", `"mcpspec-no-such-program-4711"`, "not found"}, false},
	}
	if _, err := exec.LookPath("node"); err == nil {
		servers = append(servers, server{"node module missing", "node " + script + " " + starts,
			[]string{`cannot start: Cannot find module 'mcpspec-no-such-module'`, "exited with code 1 during the handshake"}, true})
	} else {
		t.Log("node is not on PATH: the missing-module case is left out")
	}
	for _, srv := range servers {
		for _, parallel := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s, parallel %d", srv.name, parallel), func(t *testing.T) {
				_ = os.Remove(starts)
				col := parse(t, `
name: Unstartable
server: SPEC
tests:
  - {id: first, list: tools}
  - {id: second, call: echo, with: {text: a}}
  - {id: third, read: "file:///x"}
  - {id: fourth, list: prompts}
`, nil, "SPEC", srv.spec)
				run, err := runCols(t, &runner.Options{Parallel: parallel}, col)
				if err == nil {
					t.Fatal("Run: no error, want a ConnectError")
				}
				var errored []*result.Test
				for _, x := range run.Collections[0].Tests {
					switch x.Status {
					case result.Errored:
						errored = append(errored, x)
					case result.Skipped:
					default:
						t.Errorf("%s: %s, want errored or skipped", x.ID, x.Status)
					}
				}
				if len(errored) != 1 {
					t.Fatalf("%d tests errored, want 1 (the others not run)", len(errored))
				}
				first := errored[0]
				for _, m := range srv.msg {
					if !strings.Contains(first.Error.Message, m) {
						t.Errorf("%s: error %q does not say %q", first.ID, first.Error.Message, m)
					}
				}
				if first.Error.Hint == "" {
					t.Errorf("%s: no hint", first.ID)
				}
				for _, x := range run.Collections[0].Tests {
					want := `not run: server "default" could not be connected: see "` + first.Name + `"`
					if x != first && x.SkipReason != want {
						t.Errorf("%s: skip reason %q, want %q", x.ID, x.SkipReason, want)
					}
				}
				if srv.count {
					b, err := os.ReadFile(starts)
					if err != nil || len(b) != 1 {
						t.Errorf("the server started %d times (%v), want once", len(b), err)
					}
				}
			})
		}
	}
}
