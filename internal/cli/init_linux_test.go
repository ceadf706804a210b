//go:build linux

package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitWizardOnTerminal: on a terminal, `mcpspec init` without --server asks for the server
// and the tools (no --interactive needed), and writes the collection the answers describe.
func TestInitWizardOnTerminal(t *testing.T) {
	bin, err := exec.LookPath("mcpspec")
	if err != nil {
		t.Fatalf("mcpspec is not on PATH (TestMain puts it there): %v", err)
	}
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) from util-linux is not installed: no pseudo-terminal to run the wizard on")
	}
	dir := t.TempDir()
	cmd := exec.Command(script, "-q", "-e", "-c", shellQuote(bin)+" init", filepath.Join(dir, "typescript"))
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader("testserver\necho,add\n")
	cmd.Env = append(os.Environ(), "TERM=dumb")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mcpspec init under a pseudo-terminal: %v\n%s", err, out)
	}
	for _, want := range []string{"Server to test", "over stdio", "Tools to test, comma-separated", "Wrote collections/mcptest.yaml (3 tests)"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("the transcript lacks %q:\n%s", want, out)
		}
	}
	col, err := os.ReadFile(filepath.Join(dir, "collections", "mcptest.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(col, []byte(`call: "add"`)) || bytes.Contains(col, []byte(`call: "slow"`)) {
		t.Errorf("the collection does not test exactly the tools answered:\n%s", col)
	}
}
