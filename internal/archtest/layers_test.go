package archtest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// section returns the lines of the "## title" section of a Markdown document.
func section(t *testing.T, doc, title string) []string {
	t.Helper()
	var lines []string
	in := false
	for l := range strings.SplitSeq(doc, "\n") {
		if strings.HasPrefix(l, "## ") {
			if in {
				break
			}
			in = strings.TrimSpace(strings.TrimPrefix(l, "## ")) == title
			continue
		}
		if in {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		t.Fatalf("docs/library.md has no section %q", title)
	}
	return lines
}

func libraryDoc(t *testing.T, top string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(top, "docs", "library.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// pkg is one package of the module with the packages of the module it imports (test files
// left out), both relative to the module path ("." for the root).
type pkg struct {
	path    string
	imports []string
}

// packages lists the module's packages with `go list`.
func packages(t *testing.T, top string) []pkg {
	t.Helper()
	out := goCmd(t, 5*time.Minute, top, nil, "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...")
	var ps []pkg
	for l := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		p := pkg{path: rel(f[0])}
		for _, imp := range f[1:] {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				p.imports = append(p.imports, rel(imp))
			}
		}
		ps = append(ps, p)
	}
	if len(ps) == 0 {
		t.Fatal("go list ./... listed no package")
	}
	return ps
}

func rel(importPath string) string {
	if importPath == module {
		return "."
	}
	return strings.TrimPrefix(importPath, module+"/")
}

var (
	tableRow = regexp.MustCompile("^\\| `([^`]+)` \\|")
	listItem = regexp.MustCompile(`^(\d+)\. `)
	quoted   = regexp.MustCompile("`([^`]+)`")
)

// TestLayoutDocumented checks that the Layout table of docs/library.md has one row for every
// package of the module, and none for a package that does not exist.
func TestLayoutDocumented(t *testing.T) {
	top := root(t)
	rows := map[string]int{}
	for _, l := range section(t, libraryDoc(t, top), "Layout") {
		if m := tableRow.FindStringSubmatch(l); m != nil {
			rows[m[1]]++
		}
	}
	var problems []string
	have := map[string]bool{}
	for _, p := range packages(t, top) {
		have[p.path] = true
		switch rows[p.path] {
		case 0:
			problems = append(problems, fmt.Sprintf("%s is missing: add its row to the table", p.path))
		case 1:
		default:
			problems = append(problems, fmt.Sprintf("%s has %d rows, want one", p.path, rows[p.path]))
		}
	}
	for name := range rows {
		if !have[name] {
			problems = append(problems, fmt.Sprintf("%s is listed but is no package of the module (moved or removed?)", name))
		}
	}
	slices.Sort(problems)
	for _, p := range problems {
		t.Errorf("docs/library.md, Layout: %s", p)
	}
}

// layers parses the numbered list of the Layers section: layer n holds the backquoted
// patterns of item n.
func layers(t *testing.T, doc string) map[string]int {
	t.Helper()
	layerOf := map[string]int{}
	want := 1
	for _, l := range section(t, doc, "Layers") {
		m := listItem.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if m[1] != fmt.Sprint(want) {
			t.Fatalf("docs/library.md, Layers: item %s where %d was expected", m[1], want)
		}
		pats := quoted.FindAllStringSubmatch(l, -1)
		if len(pats) == 0 {
			t.Fatalf("docs/library.md, Layers: item %d names no package", want)
		}
		for _, p := range pats {
			if n, dup := layerOf[p[1]]; dup {
				t.Fatalf("docs/library.md, Layers: %s is in layers %d and %d", p[1], n, want)
			}
			layerOf[p[1]] = want
		}
		want++
	}
	if want < 3 {
		t.Fatalf("docs/library.md, Layers: %d layers; the list did not parse", want-1)
	}
	return layerOf
}

// layerOf returns the layer of the most specific pattern that covers path, and the pattern:
// the path itself, else the longest dir/... that covers it.
func layerOf(pats map[string]int, path string) (int, string) {
	best, layer, most := "", 0, -1
	for p, n := range pats {
		covers, specific := p == path, len(p)+1
		if dir, ok := strings.CutSuffix(p, "/..."); ok {
			covers, specific = path == dir || strings.HasPrefix(path, dir+"/"), len(dir)
		}
		if covers && specific > most {
			best, layer, most = p, n, specific
		}
	}
	return layer, best
}

// TestLayers checks the layer order that docs/library.md states: every package of the module
// belongs to a layer, and no package imports one of a higher layer. Every violation is
// reported, not only the first.
func TestLayers(t *testing.T) {
	top := root(t)
	pats := layers(t, libraryDoc(t, top))
	ps := packages(t, top)
	used := map[string]bool{}
	layer := map[string]int{}
	for _, p := range ps {
		n, pat := layerOf(pats, p.path)
		if n == 0 {
			t.Errorf("%s is in no layer: add it to the Layers list of docs/library.md", p.path)
			continue
		}
		layer[p.path] = n
		used[pat] = true
	}
	for pat := range pats {
		if !used[pat] {
			t.Errorf("docs/library.md, Layers: %s covers no package", pat)
		}
	}
	var up []string
	for _, p := range ps {
		for _, imp := range p.imports {
			if a, b := layer[p.path], layer[imp]; a != 0 && b > a {
				up = append(up, fmt.Sprintf("%s (layer %d) imports %s (layer %d)", p.path, a, imp, b))
			}
		}
	}
	if len(up) > 0 {
		t.Errorf("%d imports run up the layers of docs/library.md:\n\t%s", len(up), strings.Join(up, "\n\t"))
	}
}
