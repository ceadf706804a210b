package ciconfig

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestActionDocExample lints the workflow docs/ci.md shows, with uses: mcpspec/mcpspec@v1
// pointing at the checkout's action.yml.
func TestActionDocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	var wf string
	for _, m := range regexp.MustCompile("(?s)```text\n(.*?)```").FindAllStringSubmatch(string(doc), -1) {
		if strings.Contains(m[1], "uses: mcpspec/mcpspec@v1") {
			wf = strings.Replace(m[1], "uses: mcpspec/mcpspec@v1", "uses: ./", 1)
		}
	}
	if wf == "" {
		t.Fatal("docs/ci.md shows no workflow using mcpspec/mcpspec@v1")
	}
	src, _, _ := readAction(t)
	root, p := project(t, src)
	if errs := lintIn(t, root, p, "doc.yml", []byte(wf)); len(errs) > 0 {
		t.Errorf("actionlint rejects the workflow of docs/ci.md:\n%s\n\n%s", strings.Join(errs, "\n"), wf)
	}
}
