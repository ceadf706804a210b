//go:build linux

package interop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitThenTestOnServerFilesystem is the "from an empty directory" check: beside
// server-filesystem from npm (its root a fresh temporary directory), `mcpspec init --server …`
// writes a collection, its snapshots, the lockfile and .gitignore, leaves the tools annotated
// destructiveHint out and says so, and `mcpspec test` with no argument then passes — twice,
// so the snapshots hold on a second run. No server process outlives either command.
func TestInitThenTestOnServerFilesystem(t *testing.T) {
	t.Parallel()
	peer := requireNodePeer(t, "@modelcontextprotocol/server-filesystem")
	exe := buildMcpspec(t)
	root, work := t.TempDir(), t.TempDir()
	server := peer.node + " " + peer.entry + " " + root
	runExample(t, exe, work, "init", []string{"init", "--server", server})

	file := filepath.Join(work, "collections", "secure-filesystem-server.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("init wrote no collection: %v", err)
	}
	text := string(data)
	for _, want := range []string{
		"# yaml-language-server: $schema=https://mcpspec.dev/schema/collection.v1.json\n",
		`call: "list_allowed_directories"`,
		"schema: output",
		"snapshot: secure-filesystem-server.list-directory",
		"#   write_file: annotated destructiveHint",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the collection lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, `call: "write_file"`) {
		t.Errorf("the collection calls write_file, which is annotated destructiveHint:\n%s", text)
	}
	for _, f := range []string{".mcpspec/tools.lock", ".gitignore", "collections/__snapshots__/secure-filesystem-server.tools-list.json"} {
		if _, err := os.Stat(filepath.Join(work, f)); err != nil {
			t.Errorf("init wrote no %s: %v", f, err)
		}
	}
	for run := 1; run <= 2; run++ {
		junit := filepath.Join(work, "out", "junit.xml")
		runExample(t, exe, work, "test (after init)", []string{"test", "--reporter", "junit=" + junit})
		checkPassingJUnit(t, junit)
	}
}
