package docsgen

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/analyze/inventory"
	"github.com/mcpspec/mcpspec/analyze/tokens"
	"github.com/mcpspec/mcpspec/internal/golden"
	"github.com/mcpspec/mcpspec/internal/regfile"
)

func loadInventory(t *testing.T, path string) *inventory.Inventory {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var inv inventory.Inventory
	if err := json.Unmarshal(data, &inv); err != nil {
		t.Fatal(err)
	}
	return &inv
}

func reference(t *testing.T, name string) *inventory.Inventory {
	return loadInventory(t, filepath.Join("..", "..", "testdata", "inventory", name+".json"))
}

func render(t *testing.T, inv *inventory.Inventory, f Format, withTokens bool) []byte {
	t.Helper()
	var opts *Options
	if withTokens {
		c, err := tokens.NewCounter(tokens.O200kBase)
		if err != nil {
			t.Fatal(err)
		}
		r, err := tokens.Measure(c, inv.Tools)
		if err != nil {
			t.Fatal(err)
		}
		opts = &Options{Tokens: r}
	}
	files, err := Render(inv, f, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[f.FileName()] == nil {
		t.Fatalf("files %v", files)
	}
	return files[f.FileName()]
}

func TestGolden(t *testing.T) {
	cases := []struct {
		name   string
		inv    func(t *testing.T) *inventory.Inventory
		tokens bool
	}{
		{"server-everything", func(t *testing.T) *inventory.Inventory { return reference(t, "server-everything") }, true},
		{"server-filesystem", func(t *testing.T) *inventory.Inventory { return reference(t, "server-filesystem") }, false},
		{"hostile", func(t *testing.T) *inventory.Inventory {
			return loadInventory(t, filepath.Join("testdata", "hostile.json"))
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inv := tc.inv(t)
			md := render(t, inv, Markdown, tc.tokens)
			golden.Check(t, filepath.Join("testdata", tc.name+".md"), md)
			html := render(t, inv, HTML, tc.tokens)
			golden.Check(t, filepath.Join("testdata", tc.name+".html"), html)
			// Deterministic: the same inventory with its lists in another order gives the
			// same bytes.
			rev := *inv
			rev.Tools = reversed(inv.Tools)
			rev.Prompts = reversed(inv.Prompts)
			rev.Resources = reversed(inv.Resources)
			rev.Templates = reversed(inv.Templates)
			if again := render(t, &rev, Markdown, tc.tokens); string(again) != string(md) {
				t.Error("the Markdown depends on the order the server listed things in")
			}
		})
	}
}

func reversed[T any](s []T) []T {
	out := make([]T, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

// TestHostileEscaped: nothing a server writes becomes markup.
func TestHostileEscaped(t *testing.T) {
	inv := loadInventory(t, filepath.Join("testdata", "hostile.json"))
	md := string(render(t, inv, Markdown, false))
	for _, bad := range []string{"<script", "<img", "](javascript", "![img]", "<b>", "<i>", "\n# Not", "\n- not", "\n1. not", "<!--"} {
		if unescaped(md, bad) {
			t.Errorf("Markdown holds %q unescaped", bad)
		}
	}
	// Every table row keeps its column count: pipes inside cells are escaped.
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		unescaped := strings.Count(line, "|") - strings.Count(line, `\|`)
		if unescaped != 8 && unescaped != 5 && unescaped != 4 {
			t.Errorf("table row with %d cell separators: %s", unescaped, line)
		}
	}
	html := string(render(t, inv, HTML, false))
	for _, bad := range []string{"<script>alert", "<img src=x", "<b>t</b>", "<i>x</i>"} {
		if strings.Contains(html, bad) {
			t.Errorf("HTML holds %q unescaped", bad)
		}
	}
}

// unescaped reports whether s holds sub with its first character not escaped by a backslash.
func unescaped(s, sub string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], sub)
		if j < 0 {
			return false
		}
		at := i + j
		if sub[0] == '\n' {
			at++ // the character after the line break matters
		}
		if at == 0 || s[at-1] != '\\' {
			return true
		}
		i = i + j + 1
	}
}

func TestEscapeBlock(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain", "plain"},
		{"a\nb", "a\\\nb"},
		{"a\n\n\nb", "a\n\nb"},
		{"- item\n+ item\n12. item\n= x", "\\- item\\\n\\+ item\\\n12\\. item\\\n\\= x"},
		{"*x* _y_ `z` [l](u) <h> a|b #c !d ~e &f", "\\*x\\* \\_y\\_ \\`z\\` \\[l\\](u) \\<h\\> a\\|b \\#c \\!d \\~e &amp;f"},
		{"  spaced   out  ", "spaced out"},
	}
	for _, c := range cases {
		if got := escapeBlock(c.in); got != c.want {
			t.Errorf("escapeBlock(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCodeSpanAndFence(t *testing.T) {
	for in, want := range map[string]string{"a": "`a`", "a`b": "``a`b``", "`a": "`` `a ``", "a``b": "```a``b```"} {
		if got := codeSpan(in); got != want {
			t.Errorf("codeSpan(%q) = %q, want %q", in, got, want)
		}
	}
	if got := fence("json", "x\n````\ny"); !strings.HasPrefix(got, "`````json\n") || !strings.HasSuffix(got, "\n`````") {
		t.Errorf("fence: %q", got)
	}
}

func TestParams(t *testing.T) {
	raw := json.RawMessage(`{"type":"object","$defs":{"Mode":{"type":"string","enum":["a","b"]}},
		"properties":{
			"z":{"type":["string","null"],"maxLength":10},
			"mode":{"$ref":"#/$defs/Mode","description":"how"},
			"n":{"type":"integer","minimum":0,"exclusiveMaximum":100,"default":5},
			"tags":{"type":"array","items":{"type":"string"},"minItems":1,"uniqueItems":true},
			"when":{"type":"string","format":"date-time","pattern":"^2"},
			"pick":{"anyOf":[{"type":"string"},{"type":"integer"}]},
			"c":{"const":"fixed"}
		},"required":["mode","n"]}`)
	got, note := params(raw)
	want := []param{
		{Name: "c", Type: "const", Enum: `"fixed"`},
		{Name: "mode", Type: "string", Required: true, Enum: `"a", "b"`, Description: "how"},
		{Name: "n", Type: "integer", Required: true, Default: "5", Constraints: "≥ 0; < 100"},
		{Name: "pick", Type: "string | integer"},
		{Name: "tags", Type: "array of string", Constraints: "items ≥ 1; unique items"},
		{Name: "when", Type: "string", Constraints: "format date-time; pattern ^2"},
		{Name: "z", Type: "string | null", Constraints: "length ≤ 10"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if note != "" {
		t.Errorf("note %q", note)
	}
	if _, note := params(json.RawMessage(`{"type":"string"}`)); !strings.Contains(note, "not object") {
		t.Errorf("string schema note %q", note)
	}
	if _, note := params(nil); note == "" {
		t.Error("no note for a missing schema")
	}
}

func TestExampleArguments(t *testing.T) {
	cases := []struct{ schema, want string }{
		{`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`, `{"a":1,"b":1}`},
		{`{"type":"object","properties":{"q":{"type":"string"},"limit":{"type":"integer","minimum":5,"default":10}}}`, `{"limit":10,"q":"q"}`},
		{`{"type":"object","properties":{"when":{"type":"string","format":"date"},"e":{"enum":["x","y"]},"ex":{"type":"string","examples":["hello"]},"n":{"type":"integer","minimum":3,"maximum":2}},"required":["when","e","ex","n"]}`, `{"e":"x","ex":"hello","n":2,"when":"2025-01-01"}`},
		{`{"type":"object","properties":{"ids":{"type":"array","items":{"type":"integer"},"minItems":2},"opt":{"anyOf":[{"type":"null"},{"type":"boolean"}]}},"required":["ids","opt"]}`, `{"ids":[1,1],"opt":true}`},
		{`{"type":"object","properties":{"s":{"type":"string","minLength":5,"maxLength":6}},"required":["s"]}`, `{"s":"sxxxx"}`},
		{`{"type":"object","$defs":{"P":{"type":"object","properties":{"x":{"type":"boolean"}},"required":["x"]}},"properties":{"p":{"$ref":"#/$defs/P"}},"required":["p"]}`, `{"p":{"x":true}}`},
		{`not json`, `{}`},
	}
	for _, c := range cases {
		got, _ := json.Marshal(ExampleArguments(json.RawMessage(c.schema)))
		if string(got) != c.want {
			t.Errorf("%s: %s, want %s", c.schema, got, c.want)
		}
	}
}

func TestBadges(t *testing.T) {
	got := badges(json.RawMessage(`{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}`), nil)
	want := []string{"read-only", "non-destructive", "idempotent", "closed world"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := badges(nil, nil); len(got) != 0 {
		t.Errorf("no annotations: %v", got)
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{"README.md": []byte("a\nb\n")}
	d, err := Check(dir, files)
	if err != nil || !strings.Contains(d, "README.md is missing") {
		t.Errorf("missing: %q %v", d, err)
	}
	if err := Write(dir, files, false); err != nil {
		t.Fatal(err)
	}
	if d, err := Check(dir, files); err != nil || d != "" {
		t.Errorf("fresh: %q %v", d, err)
	}
	if d, _ := Check(dir, map[string][]byte{"README.md": []byte("a\nc\n")}); !strings.Contains(d, "-b") || !strings.Contains(d, "+c") {
		t.Errorf("stale: %q", d)
	}
}

// TestWriteRefuses: a hand-written README.md is not replaced unless forced, a generated one
// is, and a symbolic link at the target (dangling or not) is never written through.
func TestWriteRefuses(t *testing.T) {
	inv := loadInventory(t, filepath.Join("testdata", "hostile.json"))
	files := map[string][]byte{"README.md": render(t, inv, Markdown, false)}
	dir := t.TempDir()
	readme := filepath.Join(dir, "README.md")
	if err := os.WriteFile(readme, []byte("# My project\n\nHand-written.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var ng *NotGeneratedError
	if err := Write(dir, files, false); !errors.As(err, &ng) {
		t.Errorf("over a hand-written README: %v, want a *NotGeneratedError", err)
	}
	if b, _ := os.ReadFile(readme); !strings.Contains(string(b), "Hand-written") {
		t.Error("the hand-written README was replaced")
	}
	if err := Write(dir, files, true); err != nil {
		t.Fatalf("forced: %v", err)
	}
	if err := Write(dir, files, false); err != nil {
		t.Errorf("over a generated README: %v", err)
	}
	linked, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(filepath.Join(outside, "planted.md"), filepath.Join(linked, "README.md")); err != nil {
		t.Fatal(err)
	}
	var nr *regfile.NotRegularError
	if err := Write(linked, files, true); !errors.As(err, &nr) {
		t.Errorf("through a dangling link: %v, want a *regfile.NotRegularError", err)
	}
	if _, err := os.Lstat(filepath.Join(outside, "planted.md")); err == nil {
		t.Error("a file was created through the link")
	}
}
