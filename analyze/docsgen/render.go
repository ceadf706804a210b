package docsgen

import (
	"bytes"
	_ "embed" // the HTML template
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rogpeppe/go-internal/diff"

	"github.com/mcpspec/mcpspec/analyze/inventory"
	"github.com/mcpspec/mcpspec/internal/regfile"
	"github.com/mcpspec/mcpspec/internal/textfmt"
)

// Format is an output format of the docs.
type Format string

// The formats.
const (
	Markdown Format = "markdown"
	HTML     Format = "html"
)

// FileName is the file a format is written to in the output directory.
func (f Format) FileName() string {
	if f == HTML {
		return "index.html"
	}
	return "README.md"
}

//go:embed docs.html.tmpl
var htmlSource string

var htmlTemplate = template.Must(template.New("docs").Funcs(template.FuncMap{
	"plural": textfmt.Plural,
	"anchor": anchor,
	"badgeClass": func(b string) string {
		return strings.ReplaceAll(b, " ", "-")
	},
}).Parse(htmlSource))

// Render returns the docs of inv: file name (relative to the output directory) → content.
func Render(inv *inventory.Inventory, format Format, opts *Options) (map[string][]byte, error) {
	p := buildPage(inv, opts)
	switch format {
	case Markdown:
		return map[string][]byte{format.FileName(): markdown(p)}, nil
	case HTML:
		var b bytes.Buffer
		if err := htmlTemplate.Execute(&b, p); err != nil {
			return nil, fmt.Errorf("docsgen: render HTML: %w", err)
		}
		return map[string][]byte{format.FileName(): b.Bytes()}, nil
	}
	return nil, fmt.Errorf("docsgen: unknown format %q (use markdown or html)", format)
}

// anchor makes an HTML id from a kind and a server-chosen name: letters, digits, - and _
// kept, anything else hex-escaped, so two names never share an id.
func anchor(kind, name string) string {
	var b strings.Builder
	b.WriteString(kind + "-")
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-':
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, "_%x", r)
		}
	}
	return b.String()
}

// maxCommittedBytes bounds a committed docs file [Check] reads: a larger one is refused, unread.
const maxCommittedBytes = 16 << 20

// Write writes files into dir (created when missing).
func Write(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("docsgen: create %s: %w", dir, err)
	}
	for _, name := range sortedNames(files) {
		if err := os.WriteFile(filepath.Join(dir, name), files[name], 0o644); err != nil {
			return fmt.Errorf("docsgen: write: %w", err)
		}
	}
	return nil
}

// Check compares files with what dir holds. It returns a unified diff for each file that is
// missing or differs ("" when the docs are up to date).
func Check(dir string, files map[string][]byte) (string, error) {
	var out strings.Builder
	for _, name := range sortedNames(files) {
		path := filepath.Join(dir, name)
		old, err := regfile.ReadFile(path, maxCommittedBytes)
		if err != nil && !os.IsNotExist(err) {
			return "", fmt.Errorf("docsgen: check: %w", err)
		}
		if err != nil {
			fmt.Fprintf(&out, "%s is missing\n", path)
			continue
		}
		if d := diff.Diff(path+" (committed)", old, path+" (generated)", files[name]); d != nil {
			out.Write(d)
		}
	}
	return out.String(), nil
}

func sortedNames(files map[string][]byte) []string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
