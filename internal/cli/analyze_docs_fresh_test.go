package cli

import (
	"path/filepath"
	"testing"
)

// TestCommittedDocsAreFresh: examples/docs/README.md, the docs of the built-in server, is what
// `mcpspec docs` writes today (regenerate: mcpspec docs --server testserver --protocol-version
// 2026-07-28 --output examples/docs). The version is pinned: a loaded machine may otherwise
// fall back to the legacy era, whose tools differ.
func TestCommittedDocsAreFresh(t *testing.T) {
	out, code := runVerb(t, "docs", "--server", "$URL", "--protocol-version", "2026-07-28", "--output", filepath.Join("..", "..", "examples", "docs"), "--check")
	if code != ExitOK {
		t.Errorf("exit %d: the committed docs are stale:\n%s", code, out)
	}
}
