//go:build linux

package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/analyze/docsgen"
	"github.com/mcpspec/mcpspec/analyze/inventory"
	"github.com/mcpspec/mcpspec/analyze/tokens"
	"github.com/mcpspec/mcpspec/internal/consumertest"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// TestDocsOfEverything runs `mcpspec docs` against server-everything (stdio) in both formats:
// --check passes right after writing, the Markdown equals what docsgen renders from the
// committed inventory (so the committed docs of a server stay fresh while it does not change),
// and the HTML renders in headless Chromium without a console error.
func TestDocsOfEverything(t *testing.T) {
	t.Parallel()
	p := requireNodePeer(t, everythingPkg)
	exe := buildMcpspec(t)
	server := spec.Join([]string{p.node, p.entry, "stdio"})
	run := func(args ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, exe, append([]string{"docs", "--server", server, "--server-env", "GZIP_ALLOWED_DOMAINS=127.0.0.1"}, args...)...)
		cmd.Dir = t.TempDir()
		cmd.WaitDelay = 5 * time.Second
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("mcpspec docs %v: %v\n%s%s", args, err, out, stderr.Bytes())
		}
		return out
	}
	dir := t.TempDir()
	run("--output", dir)
	run("--output", dir, "--format", "html")
	if out := run("--output", dir, "--check"); !bytes.Contains(out, []byte("up to date")) {
		t.Errorf("--check right after writing: %s", out)
	}

	data, err := os.ReadFile(filepath.Join("..", "testdata", "inventory", "server-everything.json"))
	if err != nil {
		t.Fatal(err)
	}
	var inv inventory.Inventory
	if err := json.Unmarshal(data, &inv); err != nil {
		t.Fatal(err)
	}
	counter, err := tokens.NewCounter(tokens.DefaultEncoding)
	if err != nil {
		t.Fatal(err)
	}
	report, err := tokens.Measure(counter, inv.Tools)
	if err != nil {
		t.Fatal(err)
	}
	files, err := docsgen.Render(&inv, docsgen.Markdown, &docsgen.Options{Tokens: report})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := docsgen.Check(dir, files); err != nil || d != "" {
		t.Errorf("the live docs differ from those of the committed inventory (%v):\n%s", err, d)
	}
	consumertest.Chromium(t, filepath.Join(dir, "index.html"))
}
