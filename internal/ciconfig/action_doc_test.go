package ciconfig

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestActionDocExample lints the workflows docs/ci.md and docs/cookbook.md show, with uses:
// mcpspec/mcpspec@v1 pointing at the checkout's action.yml, so a misspelt input fails.
func TestActionDocExample(t *testing.T) {
	for _, d := range []struct{ file, lang string }{{"ci.md", "text"}, {"cookbook.md", "yaml"}} {
		t.Run(d.file, func(t *testing.T) {
			doc, err := os.ReadFile(filepath.Join("..", "..", "docs", d.file))
			if err != nil {
				t.Fatal(err)
			}
			var wf string
			for _, m := range regexp.MustCompile("(?s)```"+d.lang+"\n(.*?)```").FindAllStringSubmatch(string(doc), -1) {
				if strings.Contains(m[1], "uses: mcpspec/mcpspec@v1") {
					wf = strings.Replace(m[1], "uses: mcpspec/mcpspec@v1", "uses: ./", 1)
				}
			}
			if wf == "" {
				t.Fatalf("docs/%s shows no workflow using mcpspec/mcpspec@v1", d.file)
			}
			src, _, _ := readAction(t)
			root, p := project(t, src)
			if errs := lintIn(t, root, p, "doc.yml", []byte(wf)); len(errs) > 0 {
				t.Errorf("actionlint rejects the workflow of docs/%s:\n%s\n\n%s", d.file, strings.Join(errs, "\n"), wf)
			}
		})
	}
}
