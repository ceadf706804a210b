package retrieval

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestReadmeGoldenSets keeps the README and docs/ honest: every yml block in them is a golden
// set that loads.
func TestReadmeGoldenSets(t *testing.T) {
	names, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, name := range append([]string{"../../README.md"}, names...) {
		text, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, b := range regexp.MustCompile("(?s)```yml\n(.*?)```").FindAllSubmatch(text, -1) {
			n++
			if _, err := ParseGoldenSet(b[1]); err != nil {
				t.Errorf("%s: yml block %d is not a golden set: %v", name, i+1, err)
			}
		}
	}
	if n == 0 {
		t.Fatal("no yml block (golden set) in README.md or docs/")
	}
}
