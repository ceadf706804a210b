package cli

import (
	"path/filepath"
	"testing"
)

// TestCommittedDocsAreFresh: examples/docs/README.md, the docs of the built-in server, is what
// `mcpspec docs` writes today (regenerate: mcpspec docs --server testserver --output examples/docs).
func TestCommittedDocsAreFresh(t *testing.T) {
	out, code := runVerb(t, "docs", "--server", "$URL", "--output", filepath.Join("..", "..", "examples", "docs"), "--check")
	if code != ExitOK {
		t.Errorf("exit %d: the committed docs are stale:\n%s", code, out)
	}
}
