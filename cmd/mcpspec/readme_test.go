package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/internal/cli"
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
	// The install line comes before the first example that assumes mcpspec on PATH. It installs
	// from the clone: "go install …@latest" cannot work before the module is published.
	install := strings.Index(readme, "```sh\ngo install ./cmd/mcpspec\n```")
	first := regexp.MustCompile("(?m)^```sh\n(?:.*\n)*?mcpspec ").FindStringIndex(readme)
	if install < 0 || first == nil || install > first[1] {
		t.Errorf("the install line (at %d) must come before the first `mcpspec …` example (at %v)", install, first)
	}
}

// TestReadmeCommandsRun: every verb the README names ("mcpspec VERB", in code or prose) is one
// (its --help exits 0), and every file an example in a clone passes (--env-file, --data, @FILE,
// a collection under examples/) is in the repository.
func TestReadmeCommandsRun(t *testing.T) {
	readme := read(t, "../../README.md")
	var verbs []string
	for _, m := range regexp.MustCompile("`mcpspec ([a-z][a-z-]*)").FindAllStringSubmatch(readme, -1) {
		verbs = append(verbs, m[1])
	}
	for _, block := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(readme, -1) {
		for _, m := range regexp.MustCompile(`(?m)^mcpspec ([a-z][a-z-]*)`).FindAllStringSubmatch(block[1], -1) {
			verbs = append(verbs, m[1])
		}
	}
	seen := map[string]bool{}
	for _, verb := range verbs {
		if seen[verb] {
			continue
		}
		seen[verb] = true
		var out strings.Builder
		if code := cli.Run(context.Background(), []string{"mcpspec", verb, "--help"}, &cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out}); code != cli.ExitOK {
			t.Errorf("README names `mcpspec %s`, but `mcpspec %s --help` exits %d:\n%s", verb, verb, code, out.String())
		}
	}
	fileArg := regexp.MustCompile(`(?:--env-file |--data |@)([\w./-]+)|\b(examples/[\w./-]+)`)
	for _, block := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(readme, -1) {
		for _, line := range strings.Split(block[1], "\n") {
			line, _, _ = strings.Cut(line, " #")
			if !strings.Contains(line, "examples/") {
				continue // an example about the reader's own server and files
			}
			for _, m := range fileArg.FindAllStringSubmatch(line, -1) {
				path := m[1] + m[2]
				if _, err := os.Stat(filepath.Join("..", "..", path)); err != nil {
					t.Errorf("README example %q needs %s, which a fresh clone lacks", strings.TrimSpace(line), path)
				}
			}
		}
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
