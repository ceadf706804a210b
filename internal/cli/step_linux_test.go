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

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/baseline/history"
)

// stepCollection's first test passes only once the variable word is edited at the prompt.
const stepCollection = `name: Step
server: testserver
variables: {word: hello, apiToken: sekrit-value-123}
tests:
  - {id: first, call: echo, with: {text: "{{word}}"}, expect: [{contains: bonjour}]}
  - {id: second, call: echo, with: {text: a}}
  - {id: third, call: echo, with: {text: b}}
  - {id: fourth, call: echo, with: {text: c}}
`

// TestStepUnderPseudoTerminal answers the --step prompt on a real terminal (script(1) gives
// mcpspec one; the answers are typed ahead): print the variables (the secret masked), edit
// one, run, skip, run, abort. The first test passes only with the edit; the results hold every
// test, the aborted run exits 130 and its run directory says so.
func TestStepUnderPseudoTerminal(t *testing.T) {
	bin, err := exec.LookPath("mcpspec")
	if err != nil {
		t.Fatalf("mcpspec is not on PATH (TestMain puts it there): %v", err)
	}
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) from util-linux is not installed: cannot give --step a terminal")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "step.yaml"), []byte(stepCollection), 0o644); err != nil {
		t.Fatal(err)
	}
	line := shellQuote(bin) + " test --step step.yaml --reporter json=out.json; echo exit=$?"
	cmd := exec.Command(script, "-q", "-e", "-c", line, filepath.Join(dir, "typescript"))
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader("p\nset word bonjour\nwhat\n\ns\n\nq\n")
	cmd.Env = append(os.Environ(), "TERM=dumb", "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	tr := string(out)
	for _, want := range []string{
		"▸ next: Step › first (1 of 4)",
		"apiToken = ***",
		"word = hello",
		"word = bonjour",
		`unknown answer "what"`,
		"skipping second",
		"▸ next: Step › fourth (4 of 4)",
		"aborting",
		"exit=130",
	} {
		if !strings.Contains(tr, want) {
			t.Errorf("the terminal does not show %q:\n%s", want, tr)
		}
	}
	if strings.Contains(tr, "sekrit-value-123") {
		t.Errorf("the secret reached the terminal:\n%s", tr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "out.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Interrupted bool `json:"interrupted"`
		Collections []struct {
			Tests []struct {
				ID, Status, SkipReason string
			} `json:"tests"`
		} `json:"collections"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, x := range doc.Collections[0].Tests {
		got[x.ID] = x.Status
	}
	want := map[string]string{"first": "passed", "second": "skipped", "third": "passed", "fourth": "skipped"}
	if d := cmp.Diff(want, got); d != "" || !doc.Interrupted {
		t.Errorf("results (-want +got):\n%s\ninterrupted: %v", d, doc.Interrupted)
	}
	runs, err := filepath.Glob(filepath.Join(dir, ".mcpspec", "runs", "test", "*"))
	if err != nil || len(runs) != 1 {
		t.Fatalf("run directories: %v, %v", runs, err)
	}
	h, err := history.ReadHeader(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	if h.Verdict != "interrupted" || h.ExitCode != 130 {
		t.Errorf("run.json: verdict %q, exit code %d", h.Verdict, h.ExitCode)
	}
	if o, _ := os.ReadFile(filepath.Join(runs[0], h.Output)); bytes.Contains(o, []byte("sekrit-value-123")) {
		t.Error("the run directory's output holds the secret")
	}
}
