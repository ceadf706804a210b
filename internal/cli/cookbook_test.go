package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

// TestCookbookCovered keeps docs/cookbook.md true: every fenced block of the page is selected by
// a readme (commands, collections) or readmeout (outputs) line of a
// testdata/script/cookbook_*.txtar (one script per recipe, so they run in parallel), and every
// command block a script writes out it then runs, so a block added to the page without a test
// fails here, and one that drifts from the CLI fails TestScripts/cookbook_*.
func TestCookbookCovered(t *testing.T) {
	root := filepath.Join("..", "..")
	page := filepath.Join(root, "docs", "cookbook.md")
	doc, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	scripts, err := filepath.Glob(filepath.Join("testdata", "script", "cookbook_*.txtar"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no testdata/script/cookbook_*.txtar (%v)", err)
	}
	used := map[string]bool{} // "lang\nblock" of each block the scripts select
	for _, name := range scripts {
		ar, err := txtar.ParseFile(name)
		if err != nil {
			t.Fatal(err)
		}
		script := strings.Split(string(ar.Comment), "\n")
		for i, line := range script {
			args := scriptArgs(line)
			var lang, text string
			switch {
			case len(args) == 4 && args[0] == "readme":
				lang, text = args[1], args[2]
				if lang == "sh" && !ranLater(script[i+1:], args[3]) {
					t.Errorf("%s:%d: %s is written but never run (exec or expect-exit … sh %s)", name, i+1, args[3], args[3])
				}
			case len(args) == 2 && args[0] == "readmeout":
				lang, text = "text", args[1]
			default:
				continue
			}
			block, file, err := docBlock(root, lang, text)
			if err != nil {
				t.Errorf("%s:%d: %v", name, i+1, err)
				continue
			}
			if file != page {
				t.Errorf("%s:%d: %q selects a %s block of %s, not of the cookbook: make it unique", name, i+1, text, lang, file)
				continue
			}
			used[lang+"\n"+block] = true
		}
	}
	var missing []string
	for _, m := range regexp.MustCompile("(?s)```([a-z]*)\n(.*?)```").FindAllStringSubmatch(string(doc), -1) {
		if !used[m[1]+"\n"+m[2]] {
			missing = append(missing, fmt.Sprintf("```%s block starting %q", m[1], firstLine(m[2])))
		}
	}
	if d := cmp.Diff([]string(nil), missing); d != "" {
		t.Errorf("docs/cookbook.md has blocks no cookbook_*.txtar runs or checks (-want +got):\n%s", d)
	}
}

// ranLater reports whether a script line after a readme line runs `sh FILE`.
func ranLater(lines []string, file string) bool {
	for _, l := range lines {
		args := scriptArgs(l)
		if len(args) >= 3 && (args[0] == "exec" || args[0] == "expect-exit") && args[len(args)-2] == "sh" && args[len(args)-1] == file {
			return true
		}
	}
	return false
}

// scriptArgs splits a testscript line into its words as testscript does for these commands:
// blanks separate words, and '…' quotes (with ” for a quote) keep them together.
func scriptArgs(line string) []string {
	var args []string
	var word strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quoted && c == '\'' && i+1 < len(line) && line[i+1] == '\'':
			word.WriteByte('\'')
			i++
		case c == '\'':
			quoted, inWord = !quoted, true
		case !quoted && (c == ' ' || c == '\t'):
			if inWord {
				args = append(args, word.String())
				word.Reset()
				inWord = false
			}
		case !quoted && c == '#' && !inWord:
			return args
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		args = append(args, word.String())
	}
	return args
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TestMatchOutput pins what a documented output block may leave out or vary (readmeout).
func TestMatchOutput(t *testing.T) {
	stdout := "PASS  3 tests: 3 passed · 184ms\n  report: runs/20261128T090742Z/report.html\n| requests | 959 | 144 |\n"
	stderr := "Error: gate leak (leak verdict: leak (261.1 KB per request))\nHint: see the report\n"
	tests := []struct {
		name, doc string
		ok        bool
	}{
		{"same", "PASS  3 tests: 3 passed · 184ms\n", true},
		{"other numbers and units", "PASS  4 tests: 4 passed · 1.5s\n", true},
		{"blanks and table widths", "PASS 3 tests: 3 passed · 184ms\n|  requests  |  12 |  7 |\n", true},
		{"cut marked", "PASS  3 tests: 3 passed · 184ms\n…\n| requests | 959 | 144 |\n", true},
		{"run id", "  report: runs/20251231T235959Z/report.html\n", true},
		{"stderr too, in its own order", "| requests | 959 | 144 |\nError: gate leak (leak verdict: leak (9 KB per request))\nHint: see the report\n", true},
		{"a prefix ending in …", "Error: gate leak …\n", true},
		{"other words", "FAIL  3 tests: 3 passed · 184ms\n", false},
		{"a word missing", "PASS  3 tests: 3 · 184ms\n", false},
		{"out of order", "| requests | 959 | 144 |\nPASS  3 tests: 3 passed · 184ms\n", false},
		{"a line cut without …", "PASS  3 tests\n", false},
		{"stderr out of order", "Hint: see the report\nError: gate leak (leak verdict: leak (261.1 KB per request))\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := matchOutput(tt.doc, stdout, stderr)
			if (err == nil) != tt.ok {
				t.Errorf("matchOutput(%q): %v, want ok=%v", tt.doc, err, tt.ok)
			}
		})
	}
}
