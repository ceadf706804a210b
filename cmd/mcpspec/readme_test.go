package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

// TestReadmeTwoCommands keeps the README's promise: a fresh machine needs exactly two of its
// commands, the main job on the built-in server and the tests, and CI runs the same two.
func TestReadmeTwoCommands(t *testing.T) {
	readme := read(t, "../../README.md")
	_, after, ok := strings.Cut(readme, "\n## Two commands\n")
	if !ok {
		t.Fatal("README.md has no \"## Two commands\" section")
	}
	section, _, _ := strings.Cut(after, "\n## ")
	var got []string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1) {
		got = append(got, strings.TrimSpace(m[1]))
	}
	want := []string{"go run ./cmd/mcpspec test examples/quickstart.yaml", "go test ./..."}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the two commands (-want +got):\n%s", d)
	}
	ci := read(t, "../../.ci/run")
	for _, s := range []string{"go test ./...", "mcpspec test examples/quickstart.yaml"} {
		if !strings.Contains(ci, s) {
			t.Errorf(".ci/run does not run %q", s)
		}
	}
	// The install line comes before the first example that assumes mcpspec on PATH.
	install := strings.Index(readme, "go install github.com/mcpspec/mcpspec/cmd/mcpspec@latest")
	first := regexp.MustCompile("(?m)^```sh\n(?:.*\n)*?mcpspec ").FindStringIndex(readme)
	if install < 0 || first == nil || install > first[1] {
		t.Errorf("the install line (at %d) must come before the first `mcpspec …` example (at %v)", install, first)
	}
}

// TestDocLinks checks every relative link of README.md and docs/*.md: the file exists and, for
// a #fragment into Markdown, the heading does.
func TestDocLinks(t *testing.T) {
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	linkRE := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, file := range append([]string{"../../README.md"}, docs...) {
		text := stripCode(read(t, file))
		for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), path)
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link %q: %v", file, target, err)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(dest, ".md") && !anchors(read(t, dest))[frag] {
				t.Errorf("%s: link %q: %s has no heading with that anchor", file, target, dest)
			}
		}
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// stripCode drops fenced code blocks, whose text is not Markdown.
func stripCode(s string) string {
	return regexp.MustCompile("(?s)```.*?```").ReplaceAllString(s, "")
}

// anchors returns the anchors GitHub gives a document's headings: lower case, punctuation
// dropped, spaces as hyphens, "-1", "-2" … after repeats.
func anchors(doc string) map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(stripCode(doc), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		for n, try := 1, a; ; n++ {
			if !out[try] {
				out[try] = true
				break
			}
			try = a + "-" + strconv.Itoa(n)
		}
	}
	return out
}
