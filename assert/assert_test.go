package assert

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// toolResult is a tools/call result like the reference server's add tool returns.
const toolResult = `{"content":[{"type":"text","text":"2 + 3 = 5"},{"type":"image","data":"AAAA","mimeType":"image/png"}],
"structuredContent":{"sum":5,"terms":[2,3],"label":"five","meta":{"ok":true,"note":null}},"isError":false}`

// testVars is a fixed Vars for templated expectations.
type testVars map[string]any

func (v testVars) Values() map[string]any { return v }

func (v testVars) Expand(x any) (any, error) {
	s, ok := x.(string)
	if !ok || !strings.HasPrefix(s, "{{") {
		return x, nil
	}
	name := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(s, "{{"), "}}"))
	val, ok := v[name]
	if !ok {
		return nil, fmt.Errorf("undefined variable %q", name)
	}
	return val, nil
}

func subject(t *testing.T, kind, raw string) *Subject {
	t.Helper()
	s, err := NewSubject(kind, json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	s.Vars = testVars{"want": 5.0, "name": "five", "pat": "^fi"}
	s.Latency = 40 * time.Millisecond
	return s
}

func spec(typ string, kv ...any) *Spec {
	s := &Spec{Type: typ, Keys: []string{"type"}}
	for i := 0; i < len(kv); i += 2 {
		k := kv[i].(string)
		s.Keys = append(s.Keys, k)
		v := kv[i+1]
		switch k {
		case "path":
			s.Path = v.(string)
		case "value":
			s.Value = v
		case "pattern":
			s.Pattern = v.(string)
		case "expected":
			s.Expected = v.(string)
		case "operator":
			s.Operator = v.(string)
		case "maxMs":
			s.Max = time.Duration(v.(int)) * time.Millisecond
		case "max":
			s.Max = v.(time.Duration)
		case "schema":
			s.Schema = v
		case "expr":
			s.Expr = v.(string)
		case "name":
			s.Name = v.(string)
		}
	}
	return s
}

func TestCheckers(t *testing.T) {
	reg := Builtins()
	tests := []struct {
		name string
		kind string // default tool
		doc  string // default toolResult
		spec *Spec
		// fail lists substrings the failure message must contain; nil means the check passes.
		fail []string
	}{
		{name: "equals number", spec: spec("equals", "path", "$.structuredContent.sum", "value", 5)},
		{name: "equals int vs float", spec: spec("equals", "path", "$.structuredContent.sum", "value", 5.0)},
		{name: "equals object", spec: spec("equals", "path", "$.structuredContent.meta", "value", map[string]any{"ok": true, "note": nil})},
		{name: "equals templated", spec: spec("equals", "path", "$.structuredContent.sum", "value", "{{want}}")},
		{name: "equals mismatch", spec: spec("equals", "path", "$.structuredContent.sum", "value", 6),
			fail: []string{"$.structuredContent.sum", "expected 6", "got 5"}},
		{name: "equals type mismatch", spec: spec("equals", "path", "$.structuredContent.sum", "value", "5"),
			fail: []string{`expected "5"`, "got 5"}},
		{name: "equals missing path", spec: spec("equals", "path", "$.structuredContent.nope", "value", 1),
			fail: []string{"$.structuredContent.nope", "path not found", `"sum":5`}},
		{name: "list path names the protocol field", kind: KindList, doc: `{"items":[{"name":"a"}]}`,
			spec: spec("length", "path", "$.tools", "value", 1),
			fail: []string{"$.tools: path not found", "write $.items, not $.tools"}},
		{name: "list path under the protocol field", kind: KindList, doc: `{"items":[{"name":"a"}]}`,
			spec: spec("contains", "path", "$.resourceTemplates[*].name", "value", "a"),
			fail: []string{"write $.items[*].name, not $.resourceTemplates[*].name"}},
		{name: "list path elsewhere has no list hint", kind: KindList, doc: `{"items":[{"name":"a"}]}`,
			spec: spec("exists", "path", "$.toolsX"), fail: []string{"expected the path to exist"}},
		{name: "equals undefined var", spec: spec("equals", "path", "$.structuredContent.sum", "value", "{{nope}}"),
			fail: []string{"undefined variable"}},

		{name: "contains text default", spec: spec("contains", "value", "= 5")},
		{name: "contains text missing", spec: spec("contains", "value", "= 6"),
			fail: []string{"response text", `"= 6"`, "2 + 3 = 5"}},
		{name: "contains string path", spec: spec("contains", "path", "$.structuredContent.label", "value", "iv")},
		{name: "contains array element", spec: spec("contains", "path", "$.structuredContent.terms", "value", 3)},
		{name: "contains array element missing", spec: spec("contains", "path", "$.structuredContent.terms", "value", 4),
			fail: []string{"array with element 4", "[2,3]"}},
		{name: "contains object key", spec: spec("contains", "path", "$.structuredContent", "value", "sum")},
		{name: "contains object key missing", spec: spec("contains", "path", "$.structuredContent", "value", "product"),
			fail: []string{`key "product"`, "label"}},
		{name: "contains on number", spec: spec("contains", "path", "$.structuredContent.sum", "value", 5),
			fail: []string{"expected a string, array or object, got number"}},

		{name: "exists", spec: spec("exists", "path", "$.content")},
		{name: "exists null value", spec: spec("exists", "path", "$.structuredContent.meta.note")},
		{name: "exists missing", spec: spec("exists", "path", "$.nothing"), fail: []string{"$.nothing", "expected the path to exist"}},
		{name: "exists wildcard empty", spec: spec("exists", "path", "$.content[*].nope"), fail: []string{"expected the path to exist"}},
		{name: "exists wildcard", spec: spec("exists", "path", "$.content[*].mimeType")},
		{name: "notExists", spec: spec("notExists", "path", "$.nothing")},
		{name: "notExists present", spec: spec("notExists", "path", "$.structuredContent.sum"),
			fail: []string{"expected the path not to exist", "found 5"}},

		{name: "matches text", spec: spec("matches", "pattern", `\d \+ \d = \d+`)},
		{name: "matches path", spec: spec("matches", "path", "$.structuredContent.label", "pattern", "^f.*e$")},
		{name: "matches templated", spec: spec("matches", "path", "$.structuredContent.label", "pattern", "{{pat}}")},
		{name: "matches mismatch", spec: spec("matches", "path", "$.structuredContent.label", "pattern", "^six$"),
			fail: []string{`"five" does not match /^six$/`}},
		{name: "matches non-string", spec: spec("matches", "path", "$.structuredContent.sum", "pattern", "5"),
			fail: []string{"expected a string matching", "got number"}},

		{name: "type number", spec: spec("type", "path", "$.structuredContent.sum", "expected", "number")},
		{name: "type integer", spec: spec("type", "path", "$.structuredContent.sum", "expected", "integer")},
		{name: "type array", spec: spec("type", "path", "$.content", "expected", "array")},
		{name: "type null", spec: spec("type", "path", "$.structuredContent.meta.note", "expected", "null")},
		{name: "type boolean", spec: spec("type", "path", "$.isError", "expected", "boolean")},
		{name: "type object", spec: spec("type", "path", "$.structuredContent", "expected", "object")},
		{name: "type mismatch", spec: spec("type", "path", "$.structuredContent.label", "expected", "number"),
			fail: []string{"expected number, got string", `"five"`}},
		{name: "type integer mismatch", doc: `{"x":1.5}`, spec: spec("type", "path", "$.x", "expected", "integer"),
			fail: []string{"expected integer, got number 1.5"}},

		{name: "length gt", spec: spec("length", "path", "$.content", "operator", "gt", "value", 0)},
		{name: "length eq default", spec: spec("length", "path", "$.structuredContent.terms", "value", 2)},
		{name: "length string runes", doc: `{"s":"héllo"}`, spec: spec("length", "path", "$.s", "operator", "eq", "value", 5)},
		{name: "length lte fail", spec: spec("length", "path", "$.content", "operator", "lte", "value", 1),
			fail: []string{"expected length <= 1, got length 2"}},
		{name: "length ne fail", spec: spec("length", "path", "$.structuredContent.terms", "operator", "ne", "value", 2),
			fail: []string{"length != 2"}},
		{name: "length of number", spec: spec("length", "path", "$.structuredContent.sum", "value", 1),
			fail: []string{"got number 5"}},

		{name: "latency ok", spec: spec("latency", "maxMs", 100)},
		{name: "latency duration ok", spec: spec("latency", "max", 50*time.Millisecond)},
		{name: "latency exceeded", spec: spec("latency", "maxMs", 10), fail: []string{"latency 40ms exceeds the maximum 10ms"}},

		{name: "mimeType", spec: spec("mimeType", "expected", "image/png")},
		{name: "mimeType family", spec: spec("mimeType", "expected", "image/*")},
		{name: "mimeType read", kind: KindRead, doc: `{"contents":[{"uri":"x","mimeType":"text/plain; charset=utf-8","text":"hi"}]}`,
			spec: spec("mimeType", "expected", "text/plain")},
		{name: "mimeType missing", spec: spec("mimeType", "expected", "audio/wav"),
			fail: []string{"MIME type audio/wav", "image/png"}},

		{name: "isError default true fails", spec: spec("isError"), fail: []string{"expected isError true, got false", "2 + 3 = 5"}},
		{name: "isError false", spec: spec("isError", "value", false)},
		{name: "isError true", doc: `{"content":[{"type":"text","text":"boom"}],"isError":true}`, spec: spec("isError", "value", true)},
		{name: "isError on JSON-RPC error", kind: KindError, doc: `{"error":{"code":-32602,"message":"bad"}}`, spec: spec("isError")},

		{name: "schema inline vs structuredContent", spec: spec("schema", "schema", map[string]any{
			"type": "object", "required": []any{"sum"}, "properties": map[string]any{"sum": map[string]any{"type": "integer"}}})},
		{name: "schema inline fail", spec: spec("schema", "schema", map[string]any{
			"type": "object", "properties": map[string]any{"label": map[string]any{"type": "integer"}}}),
			fail: []string{"$.structuredContent: does not match the schema", "/label", "want integer"}},
		{name: "schema inline with path", spec: spec("schema", "path", "$.content", "schema", map[string]any{"type": "array", "minItems": 2})},
		{name: "schema output", spec: spec("schema", "schema", "output")},
		{name: "schema output default", spec: spec("schema")},
		{name: "schema output no structuredContent", doc: `{"content":[]}`, spec: spec("schema"),
			fail: []string{"returned no structuredContent"}},

		{name: "expr true", spec: spec("expr", "expr", `response.structuredContent.sum == 5 and len(response.content) == 2`)},
		{name: "expr vars latency isError text", spec: spec("expr", "expr", `vars.want == response.structuredContent.sum && latency < 1000 && !isError && text contains "= 5"`)},
		{name: "expr closure", spec: spec("expr", "expr", `all(response.structuredContent.terms, # > 1) and any(response.content, .type == "image")`)},
		{name: "expr safe join replace", spec: spec("expr", "expr", `join(["a","b"], "-") == "a-b" and replace("aXb", "X", "") == "ab"`)},
		{name: "expr false", spec: spec("expr", "expr", `response.structuredContent.sum > 10`),
			fail: []string{`"response.structuredContent.sum > 10" is false`, `"sum":5`}},
		{name: "expr runtime error", spec: spec("expr", "expr", `response.structuredContent.sum.x == 1`),
			fail: []string{"failed"}},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kind, doc := tc.kind, tc.doc
			if kind == "" {
				kind = KindTool
			}
			if doc == "" {
				doc = toolResult
			}
			s := subject(t, kind, doc)
			s.OutputSchema = json.RawMessage(`{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}`)
			c, err := reg.Compile(tc.spec, &CompileOptions{SnapshotDir: dir})
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			f := c.Check(context.Background(), s)
			if tc.fail == nil {
				if f != nil {
					t.Fatalf("unexpected failure: %+v", f)
				}
				return
			}
			if f == nil {
				t.Fatalf("check passed, want failure containing %q", tc.fail)
			}
			if f.Assertion == "" || f.Message == "" {
				t.Errorf("failure lacks assertion or message: %+v", f)
			}
			for _, want := range tc.fail {
				if !strings.Contains(f.Message, want) {
					t.Errorf("message %q lacks %q", f.Message, want)
				}
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	reg := Builtins()
	tests := []struct {
		spec  *Spec
		field string
		msg   string
	}{
		{spec("nope"), "type", `unknown assertion type "nope"`},
		{spec("equals", "path", "$.x"), "", `needs "value"`},
		{spec("equals", "path", "x", "value", 1), "path", `must start with "$"`},
		{spec("equals", "path", "$.x", "value", 1, "pattern", "a"), "pattern", `not used by equals`},
		{spec("matches", "pattern", "(unclosed"), "pattern", "invalid regular expression"},
		{spec("type", "path", "$.x", "expected", "float"), "expected", `unknown type "float"`},
		{spec("length", "path", "$.x", "operator", "bigger", "value", 1), "operator", "unknown operator"},
		{spec("length", "path", "$.x", "value", -1), "value", "non-negative integer"},
		{spec("length", "path", "$.x", "value", "3"), "value", "non-negative integer"},
		{spec("latency"), "", "needs maxMs"},
		{spec("latency", "maxMs", 0), "", "must be positive"},
		{spec("mimeType", "expected", "png"), "expected", "not a MIME type"},
		{spec("isError", "value", "yes"), "value", "true or false"},
		{spec("schema", "schema", "input"), "schema", `"output" or an inline`},
		{spec("schema", "schema", map[string]any{"type": 12}), "schema", "invalid JSON Schema"},
		{spec("schema", "schema", map[string]any{"$ref": "file:///etc/passwd"}), "schema", "not allowed"},
		{spec("snapshot", "name", "../escape"), "name", "no path"},
		{spec("expr", "expr", "1 + 1"), "expr", "bool"},
		{spec("expr", "expr", "response.x =="), "expr", "unexpected"},
		{spec("expr", "expr", `__budget == nil`), "expr", "reserved"},
		{spec("expr", "expr", strings.Repeat("1 + ", 2000)+"1 > 0"), "expr", "exceeds maximum allowed nodes"},
		{spec("expr", "expr", `text == "{{ greeting }} world"`), "expr", "{{ greeting }} is not expanded inside an expression: write vars.greeting"},
		{spec("expr", "expr", `text == "{{user-id}}"`), "expr", `write vars["user-id"]`},
		{spec("expr", "expr", `text == "{{secret.TOKEN}}"`), "expr", "environment is not visible"},
	}
	for _, tc := range tests {
		t.Run(tc.spec.Type+" "+tc.msg, func(t *testing.T) {
			_, err := reg.Compile(tc.spec, &CompileOptions{SnapshotDir: t.TempDir()})
			var se *SpecError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want *SpecError", err)
			}
			if se.Field != tc.field {
				t.Errorf("field = %q, want %q (%v)", se.Field, tc.field, err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err %q lacks %q", err, tc.msg)
			}
		})
	}
}

func TestExprSafety(t *testing.T) {
	big := make([]any, 5000)
	for i := range big {
		big[i] = float64(i)
	}
	s := &Subject{Kind: KindTool, Doc: map[string]any{"items": big, "s": strings.Repeat("x", 600_000)}}
	tests := []struct{ name, expr string }{
		{"huge range", `len(1..1000000000) > 0`},
		{"nested loops over response", `all(response.items, {all(response.items, {all(response.items, # >= 0)})})`},
		{"nested ranges", `all(1..900000, {all(1..900000, # > 0)})`},
		{"string doubling", `reduce(1..100, #acc + #acc, "ab") != ""`},
		{"concat doubling", `let a = concat(response.items, response.items); let b = concat(a, a); let c = concat(b, b); let d = concat(c, c); let e = concat(d, d); let f = concat(e, e); let g = concat(f, f); len(g) > 0`},
		{"map of big strings", `len(toJSON(map(1..100000, response.s))) > 0`},
		{"replace amplification", `replace(response.s, "x", response.s) != ""`},
		{"join amplification", `join(map(1..1000, response.s), "") != ""`},
		{"let doubling", `let a = response.s + response.s; let b = a + a; let c = b + b; len(c) > 0`},
	}
	reg := Builtins()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := reg.Compile(spec("expr", "expr", tc.expr), nil)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			start := time.Now()
			f := c.Check(context.Background(), s)
			elapsed := time.Since(start)
			if f == nil {
				t.Fatal("runaway expression passed")
			}
			if !strings.Contains(f.Message, "failed") {
				t.Errorf("message %q does not report the stop", f.Message)
			}
			// The default time limit is 1s; allow generous scheduling slack on loaded CI.
			if elapsed > 5*time.Second {
				t.Errorf("took %s, want it stopped within the limit", elapsed)
			}
		})
	}
}

func TestExprTimeoutAndContext(t *testing.T) {
	s := &Subject{Kind: KindTool, Doc: map[string]any{"items": make([]any, 3000)}}
	prog, err := CompileExpr(`all(response.items, {all(response.items, true)})`, ExprLimits{})
	if err != nil {
		t.Fatal(err)
	}
	limits := ExprLimits{Timeout: 20 * time.Millisecond, MaxSteps: 1 << 40}
	_, err = EvalExpr(context.Background(), prog, ExprEnv{Response: s.Doc}, limits)
	if !errors.Is(err, ErrExprLimit) || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("timeout: err = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = EvalExpr(ctx, prog, ExprEnv{Response: s.Doc}, ExprLimits{MaxSteps: 1 << 40})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
}

func TestExprNoIO(t *testing.T) {
	for _, fn := range []string{`readFile("/etc/passwd")`, `exec("ls")`, `env("HOME")`, `open("x")`, `os.Getenv("HOME")`} {
		_, err := CompileExpr(fn+` != nil`, ExprLimits{})
		if err == nil {
			t.Errorf("%s compiled; I/O functions must not exist", fn)
		}
	}
}

// TestSnapshotNameVariables: a snapshot name with a variable is one golden file per value (one
// per --data row); a value that is not a plain file name fails the assertion.
func TestSnapshotNameVariables(t *testing.T) {
	dir := t.TempDir()
	c, err := Builtins().Compile(spec("snapshot", "name", "{{name}}", "path", "$.structuredContent"), &CompileOptions{SnapshotDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	s := subject(t, KindTool, toolResult)
	s.UpdateSnapshots = true
	if f := c.Check(context.Background(), s); f != nil {
		t.Fatalf("update: %+v", f)
	}
	if _, err := os.Stat(filepath.Join(dir, "five.json")); err != nil {
		t.Errorf("the snapshot is not named after the variable: %v", err)
	}
	bad, err := Builtins().Compile(spec("snapshot", "name", "{{pat}}"), &CompileOptions{SnapshotDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if f := bad.Check(context.Background(), s); f == nil || !strings.Contains(f.Message, `expands to "^fi"`) {
		t.Errorf("a name expanding to %q: %+v", "^fi", f)
	}
	if _, err := Builtins().Compile(spec("snapshot", "name", "../{{name}}"), &CompileOptions{SnapshotDir: dir}); err == nil {
		t.Error("a path around a variable compiled")
	}
}

func TestSnapshot(t *testing.T) {
	dir := t.TempDir()
	reg := Builtins()
	c, err := reg.Compile(spec("snapshot", "name", "add", "path", "$.structuredContent"), &CompileOptions{SnapshotDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	s := subject(t, KindTool, toolResult)
	if f := c.Check(context.Background(), s); f == nil || !strings.Contains(f.Message, "does not exist; run with --update") {
		t.Fatalf("missing snapshot: %+v", f)
	}
	s.UpdateSnapshots = true
	if f := c.Check(context.Background(), s); f != nil {
		t.Fatalf("update: %+v", f)
	}
	data, err := os.ReadFile(filepath.Join(dir, "add.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\n  \"label\": \"five\",\n") {
		t.Errorf("snapshot is not indented canonical JSON:\n%s", data)
	}
	s.UpdateSnapshots = false
	if f := c.Check(context.Background(), s); f != nil {
		t.Fatalf("compare same: %+v", f)
	}
	changed := subject(t, KindTool, strings.Replace(toolResult, `"label":"five"`, `"label":"FIVE"`, 1))
	f := c.Check(context.Background(), changed)
	if f == nil || !strings.Contains(f.Message, "-  \"label\": \"five\",\n+  \"label\": \"FIVE\",\n") {
		t.Fatalf("changed: %+v", f)
	}
}

func TestExtractAndPaths(t *testing.T) {
	s := subject(t, KindTool, toolResult)
	ctx := context.Background()
	v, err := Extract(ctx, s.Doc, "$.structuredContent.sum")
	if err != nil || v != 5.0 {
		t.Fatalf("extract = %v, %v", v, err)
	}
	if _, err := Extract(ctx, s.Doc, "$.missing"); !errors.Is(err, ErrNoMatch) {
		t.Errorf("missing: err = %v, want ErrNoMatch", err)
	}
	v, err = Extract(ctx, s.Doc, `$.content[?(@.type == "image")].mimeType`)
	if err != nil || !Equal(v, []any{"image/png"}) {
		t.Errorf("filter = %v, %v", v, err)
	}
	if _, err := CompilePath("content"); err == nil {
		t.Error("a path without $ compiled")
	}
	if got := ToString(12345678901.0); got != "12345678901" {
		t.Errorf("ToString = %q", got)
	}
}

func TestSubjectText(t *testing.T) {
	tests := []struct{ kind, doc, want string }{
		{KindTool, toolResult, "2 + 3 = 5"},
		{KindRead, `{"contents":[{"uri":"a","text":"one"},{"uri":"b","blob":"AA=="},{"uri":"c","text":"two"}]}`, "one\ntwo"},
		{KindPrompt, `{"messages":[{"role":"user","content":{"type":"text","text":"Hello, Ada"}}]}`, "Hello, Ada"},
		{KindError, `{"error":{"code":-1,"message":"nope"}}`, "nope"},
		{KindList, `{"items":[{"name":"b"},{"name":"a"}]}`, `{"items":[{"name":"b"},{"name":"a"}]}`},
		{KindMessage, `{"messages":[{"role":"user","content":{"type":"text","text":"weather?"}}],"maxTokens":100,"b":"x"}`, "x\nweather?\ntext\nuser"},
	}
	for _, tc := range tests {
		if got := subject(t, tc.kind, tc.doc).Text(); got != tc.want {
			t.Errorf("%s: Text() = %q, want %q", tc.kind, got, tc.want)
		}
	}
	if _, err := NewSubject(KindTool, json.RawMessage(`{"a":1} trailing`)); err == nil {
		t.Error("trailing data accepted")
	}
}

func TestRegistry(t *testing.T) {
	reg := Builtins()
	for _, name := range []string{"schema", "equals", "contains", "exists", "notExists", "matches", "type", "length",
		"latency", "mimeType", "isError", "snapshot", "expr", "expression", "regex"} {
		if _, ok := reg.Lookup(name); !ok {
			t.Errorf("builtin %q missing", name)
		}
	}
	if err := reg.Register(&Builtin{Name: "equals", Compile: compileEquals}); err == nil {
		t.Error("duplicate registration accepted")
	}
}

// TestSnapshotDiffAndUpdate: a mismatch quotes a unified diff of the whole document (a removed
// array entry included); --update writes only what changed and lists what it wrote.
func TestSnapshotDiffAndUpdate(t *testing.T) {
	dir := t.TempDir()
	chk, err := Builtins().Compile(&Spec{Type: "snapshot", Name: "items", Keys: []string{"type", "name"}}, &CompileOptions{SnapshotDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	v1 := subject(t, KindList, `{"items":[{"name":"a"},{"name":"b"},{"name":"c"}]}`)
	v1.UpdateSnapshots = true
	if f := chk.Check(ctx, v1); f != nil || len(v1.SnapshotsWritten) != 1 {
		t.Fatalf("first --update: %+v, wrote %v", f, v1.SnapshotsWritten)
	}
	again := subject(t, KindList, `{"items":[{"name":"a"},{"name":"b"},{"name":"c"}]}`)
	again.UpdateSnapshots = true
	if f := chk.Check(ctx, again); f != nil || len(again.SnapshotsWritten) != 0 {
		t.Errorf("--update of an unchanged snapshot: %+v, wrote %v", f, again.SnapshotsWritten)
	}
	v2 := subject(t, KindList, `{"items":[{"name":"a"},{"name":"c"}]}`)
	f := chk.Check(ctx, v2)
	if f == nil {
		t.Fatal("a removed array entry matched the snapshot")
	}
	for _, want := range []string{"(run with --update to accept):\n", "--- ", "+++ response", "-      \"name\": \"b\"\n-    },\n-    {\n"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q:\n%s", want, f.Message)
		}
	}
}

// TestExprMatchesTimeLimit: one `matches` of a large pattern over a long text costs more than
// the whole time limit, so the limit must be checked inside the match, not only between steps.
func TestExprMatchesTimeLimit(t *testing.T) {
	text := strings.Repeat("ab", 50_000)
	prog, err := CompileExpr(`all(1..40, { not (text matches "(?:[ab]{0,1000}c)") })`, ExprLimits{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = EvalExpr(context.Background(), prog, ExprEnv{Text: text}, ExprLimits{Timeout: 50 * time.Millisecond})
	elapsed := time.Since(start)
	if !errors.Is(err, ErrExprLimit) || !strings.Contains(err.Error(), "longer than 50ms") {
		t.Errorf("err = %v, want the time limit", err)
	}
	// Uninterrupted, 16 matches run between two clock checks (tens of seconds); allow slack.
	if elapsed > 5*time.Second {
		t.Errorf("took %s, want it stopped near its 50ms limit", elapsed)
	}
}

func TestExprMatches(t *testing.T) {
	tests := []struct {
		src, text string
		want      bool
		err       string
	}{
		{src: `text matches "^h.llo w.rld$"`, text: "héllo wörld", want: true},
		{src: `text matches "x"`, text: "héllo", want: false},
		{src: `text matches "\\d+"`, text: strings.Repeat("a", 5000) + "7", want: true},
		{src: `text matches "^a.b$"`, text: "a\xffb", want: true},
		{src: `text matches vars.p`, text: "abc", err: "matches: error parsing regexp"},
		{src: `response matches "a"`, text: "a", err: "the left side is []interface {}, not a string"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			prog, err := CompileExpr(tt.src, ExprLimits{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := EvalExpr(context.Background(), prog,
				ExprEnv{Text: tt.text, Response: []any{"a"}, Vars: map[string]any{"p": "(unclosed"}}, ExprLimits{})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("= %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// TestSnapshotUpdateRefusesLinks: --update never writes through a symbolic link at the
// snapshot's path (a dangling one would create a file outside the tree); the check fails.
func TestSnapshotUpdateRefusesLinks(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	planted := filepath.Join(outside, "planted.json")
	if err := os.Symlink(planted, filepath.Join(dir, "add.json")); err != nil {
		t.Fatal(err)
	}
	c, err := Builtins().Compile(spec("snapshot", "name", "add", "path", "$.structuredContent"), &CompileOptions{SnapshotDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	s := subject(t, KindTool, toolResult)
	s.UpdateSnapshots = true
	if f := c.Check(context.Background(), s); f == nil || !strings.Contains(f.Message, "symbolic link") {
		t.Errorf("update through a dangling link: %+v", f)
	}
	if _, err := os.Lstat(planted); err == nil {
		t.Error("the snapshot was written through the link, outside the snapshot directory")
	}
}
