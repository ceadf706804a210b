package collection

import (
	"os"
	"regexp"
	"testing"
)

// TestReadmeExamples keeps the README honest: every YAML block in it must load.
func TestReadmeExamples(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(readme, -1)
	if len(blocks) < 2 {
		t.Fatalf("found %d yaml blocks in README.md, want the simple and the advanced form", len(blocks))
	}
	env := func(name string) (string, bool) {
		if name == "TOKEN" {
			return "a-secret-token", true
		}
		return "", false
	}
	for i, b := range blocks {
		if _, err := Parse("README.md block "+string(rune('1'+i)), b[1], &LoadOptions{LookupEnv: env}); err != nil {
			t.Errorf("README yaml block %d does not load:\n%v", i+1, err)
		}
	}
}
