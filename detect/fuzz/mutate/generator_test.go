package mutate

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcpspec/mcpspec/collection"
)

// addSchema is a small tool schema with the usual keywords.
const addSchema = `{"type":"object","properties":{
	"a":{"type":"number","minimum":-10,"maximum":10},
	"mode":{"type":"string","enum":["fast","slow"]},
	"tags":{"type":"array","items":{"type":"string"},"maxItems":3},
	"opts":{"type":"object","properties":{"depth":{"type":"integer"}},"required":["depth"]},
	"note":{"type":"string","maxLength":5}
},"required":["a","mode","opts"],"additionalProperties":false}`

func testTools() []Tool {
	return []Tool{{Name: "add", InputSchema: json.RawMessage(addSchema)}, {Name: "bare", InputSchema: json.RawMessage(`{"type":"object"}`)}}
}

func TestFamiliesMatchCollection(t *testing.T) {
	var names []string
	for _, f := range Families() {
		names = append(names, string(f))
	}
	if !slices.Equal(names, collection.FuzzFamilies()) {
		t.Errorf("mutate.Families() = %v, collection.FuzzFamilies() = %v", names, collection.FuzzFamilies())
	}
	if _, err := ParseFamilies([]string{"schema", "nope"}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("ParseFamilies accepted an unknown family: %v", err)
	}
	if fs, _ := ParseFamilies(nil); len(fs) != len(Families()) {
		t.Errorf("no names: %v, want all", fs)
	}
}

// TestSameSeedSameCases: a seed gives the same cases byte for byte; another seed, others.
func TestSameSeedSameCases(t *testing.T) {
	gen := func(seed int64) []Case {
		g := New(seed, &Options{Tools: testTools(), MaxFrame: 256 << 10})
		var out []Case
		for range 300 {
			out = append(out, g.Next())
		}
		return out
	}
	a, b, c := gen(42), gen(42), gen(43)
	same := func(x, y []Case) bool {
		for i := range x {
			if x[i].Family != y[i].Family || x[i].Kind != y[i].Kind || x[i].What != y[i].What || !bytes.Equal(x[i].Args, y[i].Args) ||
				!slices.EqualFunc(x[i].Frames, y[i].Frames, bytes.Equal) {
				return false
			}
		}
		return true
	}
	if !same(a, b) {
		t.Error("the same seed gave different cases")
	}
	if same(a, c) {
		t.Error("different seeds gave the same cases")
	}
}

// TestFamilyContracts generates many cases and checks that each family makes what it says:
// the frames that must break the rules do, the ones that must not do not, and no frame calls a
// tool that exists.
func TestFamilyContracts(t *testing.T) {
	g := New(7, &Options{Tools: testTools(), MaxFrame: 256 << 10})
	seen := map[Family]int{}
	for range 1500 {
		c := g.Next()
		seen[c.Family]++
		if c.Family == Schema {
			if c.Tool == "" || c.Args == nil || !json.Valid(c.Args) {
				t.Fatalf("schema case without a tool call: %+v", c)
			}
			continue
		}
		if len(c.Frames) == 0 {
			t.Fatalf("%s/%s: no frame", c.Family, c.Kind)
		}
		for _, f := range c.Frames {
			if len(f) > 256<<10+1024 {
				t.Errorf("%s/%s: %d bytes, over MaxFrame", c.Family, c.Kind, len(f))
			}
			j := Judge(WithID(f, 7))
			switch c.Family {
			case Truncated, MalformedJSON, WrongJSONRPC, InvalidUTF8, Batch, NotificationID:
				if j.Strict {
					t.Errorf("%s/%s is a well-formed message: %.120s", c.Family, c.Kind, f)
				}
			case BadMethod:
				if c.Kind == "unknown" && !j.Request {
					t.Errorf("unknown method is not a request: %.120s (%s)", f, j.Why)
				}
			}
			var m struct {
				Method string `json:"method"`
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
			}
			if json.Unmarshal(WithID(f, 7), &m) == nil && m.Method == "tools/call" && (m.Params.Name == "add" || m.Params.Name == "bare") {
				t.Errorf("%s/%s calls a real tool: %.120s", c.Family, c.Kind, f)
			}
		}
	}
	for _, f := range Families() {
		if seen[f] == 0 {
			t.Errorf("family %s never generated", f)
		}
	}
	if seen[Schema] < seen[MalformedJSON] || seen[BeforeInit] > seen[MalformedJSON] {
		t.Errorf("weights: schema %d, malformed-json %d, before-initialize %d", seen[Schema], seen[MalformedJSON], seen[BeforeInit])
	}
}

func TestGeneratorOptions(t *testing.T) {
	if g := New(1, &Options{Families: []Family{Schema}}); !g.Empty() {
		t.Error("schema only, no tools: want an empty generator")
	}
	g := New(1, &Options{Families: []Family{DeepNesting}, Meta: []byte(`"k":1`)})
	if fams := g.Families(); !slices.Equal(fams, []Family{DeepNesting}) {
		t.Errorf("families %v", fams)
	}
	for range 20 {
		c := g.Next()
		if c.Family != DeepNesting || !bytes.Contains(c.Frames[0], []byte(`"_meta":{"k":1}`)) {
			t.Fatalf("case %s/%s: %.100s: want deep nesting with the _meta", c.Family, c.Kind, c.Frames[0])
		}
	}
}

func TestSchemaMutations(t *testing.T) {
	p := planTool(Tool{Name: "add", InputSchema: json.RawMessage(addSchema)})
	kinds := map[string]int{}
	byWhat := map[string]json.RawMessage{}
	for _, m := range p.mutations {
		kinds[m.kind]++
		byWhat[m.what] = m.build()
	}
	for _, k := range []string{"baseline", "empty-arguments", "arguments-not-object", "extra-property", "all-optional", "missing-required",
		"wrong-type", "boundary", "empty-string", "huge-string", "unicode", "huge-array", "enum", "optional-present"} {
		if kinds[k] == 0 {
			t.Errorf("no %s mutation (have %v)", k, kinds)
		}
	}
	check := func(what string, valid bool) {
		t.Helper()
		args, ok := byWhat[what]
		if !ok {
			t.Errorf("no mutation %q", what)
			return
		}
		v, known := p.check(args)
		if !known || v != valid {
			t.Errorf("%s: %s: valid %v (known %v), want %v", what, args, v, known, valid)
		}
	}
	check("arguments derived from the schema", true)
	check("a: maximum", true)
	check("a: maximum+1", false)
	check("a: string instead of number", false)
	check("mode: a value outside the enum", false)
	check("opts: missing (required)", false)
	check("opts.depth: a fraction for an integer", false)
	check("note: maxLength+1 (6) characters", false)
	check("tags: maxItems+1 (4) items", false)
	check("an unknown extra property", false)
	if base := byWhat["arguments derived from the schema"]; string(base) != `{"a":1,"mode":"fast","opts":{"depth":1}}` {
		t.Errorf("baseline %s", base)
	}
	if s := byWhat["mode: a lone high surrogate (\\ud800)"]; !bytes.Contains(s, []byte(`\ud800`)) {
		t.Errorf("lone surrogate lost: %s", s)
	}
	// A schema that does not compile still gets mutations; validity is then unknown.
	bad := planTool(Tool{Name: "x", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"nonsense"}}}`)})
	if len(bad.mutations) < 5 {
		t.Errorf("broken schema: %d mutations", len(bad.mutations))
	}
	if _, known := bad.check(json.RawMessage(`{}`)); known {
		t.Error("validity known for a schema that does not compile")
	}
}

func TestRefsAndUnions(t *testing.T) {
	schema := `{"type":"object","$defs":{"pt":{"type":"object","properties":{"x":{"type":"integer","minimum":3}},"required":["x"]}},
		"properties":{"p":{"$ref":"#/$defs/pt"},"q":{"anyOf":[{"type":"null"},{"type":"string","format":"email"}]}},"required":["p","q"]}`
	p := planTool(Tool{Name: "t", InputSchema: json.RawMessage(schema)})
	base := p.mutations[0].build()
	if string(base) != `{"p":{"x":3},"q":"fuzz@example.invalid"}` {
		t.Errorf("baseline %s", base)
	}
	if v, known := p.check(base); !v || !known {
		t.Errorf("baseline not valid: %v %v", v, known)
	}
}

// FuzzPlanTool checks that any schema gives mutations that build JSON, without panicking.
func FuzzPlanTool(f *testing.F) {
	for _, s := range []string{addSchema, `{"$ref":"#"}`, `{"properties":{"a":{"$ref":"#/properties/a"}}}`, `[]`, `{"type":["string",5]}`, `{"items":{"items":{}},"minItems":1e9}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, schema []byte) {
		p := planTool(Tool{Name: "t", InputSchema: schema})
		for i, m := range p.mutations {
			if i > 60 {
				break
			}
			if b := m.build(); !json.Valid(b) {
				t.Fatalf("%s: %s: not JSON: %.200s", m.kind, m.what, b)
			}
		}
	})
}
