package retrieval

import (
	"os"
	"regexp"
	"testing"
)

// TestReadmeGoldenSets keeps the README honest: every yml block in it is a golden set that
// loads.
func TestReadmeGoldenSets(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yml\n(.*?)```").FindAllSubmatch(readme, -1)
	if len(blocks) == 0 {
		t.Fatal("no yml block (golden set) in README.md")
	}
	for i, b := range blocks {
		if _, err := ParseGoldenSet(b[1]); err != nil {
			t.Errorf("README yml block %d is not a golden set: %v", i+1, err)
		}
	}
}
