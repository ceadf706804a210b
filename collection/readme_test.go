package collection

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// readDocs returns README.md and every docs/*.md, by name.
func readDocs(t *testing.T) map[string][]byte {
	t.Helper()
	names, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, n := range append([]string{"../README.md"}, names...) {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(filepath.Dir(n))+"/"+filepath.Base(n)] = b
	}
	return out
}

// TestReadmeExamples keeps the README and docs/ honest: every YAML block in them must load.
func TestReadmeExamples(t *testing.T) {
	// The docs' collections name the variables a reader exports (TOKEN, MCP_URL, MCP_TOKEN …):
	// each is set here, so that a block fails for what it says, not for the reader's shell.
	env := func(name string) (string, bool) {
		if name == "TOKEN" {
			return "a-secret-token", true
		}
		return "value-of-" + name, true
	}
	// A GitHub workflow shown beside the collections (docs/cookbook.md) is YAML but not a
	// collection: actionlint checks it (internal/ciconfig), not this test.
	workflow := regexp.MustCompile(`(?m)^jobs:`)
	n := 0
	for file, text := range readDocs(t) {
		blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(text, -1)
		for i, b := range blocks {
			if workflow.Match(b[1]) {
				continue
			}
			n++
			if _, err := Parse(file+" block "+string(rune('1'+i)), b[1], &LoadOptions{LookupEnv: env, SnapshotDir: t.TempDir()}); err != nil {
				t.Errorf("%s yaml block %d does not load:\n%v", file, i+1, err)
			}
		}
	}
	if n < 2 {
		t.Fatalf("found %d yaml blocks in README.md and docs/, want the simple and the advanced form at least", n)
	}
}
