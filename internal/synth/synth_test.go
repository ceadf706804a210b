package synth

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/assert"
)

func TestArgs(t *testing.T) {
	cases := []struct {
		name   string
		schema string
		want   map[string]any
	}{
		{"no schema", ``, map[string]any{}},
		{"not JSON", `{`, map[string]any{}},
		{"not an object schema", `{"type":"string"}`, map[string]any{}},
		{"empty object", `{"type":"object","properties":{}}`, map[string]any{}},
		{"only required properties", `{"type":"object","properties":{"text":{"type":"string"},"n":{"type":"integer"}},"required":["text"]}`,
			map[string]any{"text": Word}},
		{"const enum default examples", `{"type":"object","required":["a","b","c","d"],"properties":{
			"a":{"const":"fixed"},"b":{"type":"string","enum":["x","y"]},"c":{"type":"number","default":10},"d":{"type":"string","examples":["ex"]}}}`,
			map[string]any{"a": "fixed", "b": "x", "c": 10.0, "d": "ex"}},
		{"number bounds", `{"type":"object","required":["lo","hi","ex","neg","mult"],"properties":{
			"lo":{"type":"integer","minimum":3},"hi":{"type":"integer","maximum":-2},"ex":{"type":"integer","exclusiveMinimum":5},
			"neg":{"type":"number","minimum":-10},"mult":{"type":"integer","minimum":1,"multipleOf":4}}}`,
			map[string]any{"lo": 3.0, "hi": -2.0, "ex": 6.0, "neg": 0.0, "mult": 4.0}},
		{"strings", `{"type":"object","required":["long","short","when","mail","link"],"properties":{
			"long":{"type":"string","minLength":10},"short":{"type":"string","maxLength":3},"when":{"type":"string","format":"date-time"},
			"mail":{"type":"string","format":"email"},"link":{"type":"string","format":"uri"}}}`,
			map[string]any{"long": "mcpspecxxx", "short": "mcp", "when": "2024-01-02T03:04:05Z", "mail": "mcpspec@example.com", "link": "https://example.com/mcpspec"}},
		{"arrays and nesting", `{"type":"object","required":["paths","none","entities"],"properties":{
			"paths":{"type":"array","minItems":2,"items":{"type":"string"}},"none":{"type":"array","items":{"type":"string"}},
			"entities":{"type":"array","minItems":1,"items":{"type":"object","required":["name","flag"],"properties":{"name":{"type":"string"},"flag":{"type":"boolean"}}}}}}`,
			map[string]any{"paths": []any{"mcpspec1", "mcpspec2"}, "none": []any{}, "entities": []any{map[string]any{"name": Word, "flag": false}}}},
		{"nullable type list and anyOf", `{"type":"object","required":["a","b"],"properties":{
			"a":{"type":["null","integer"]},"b":{"anyOf":[{"type":"null"},{"type":"string"}]}}}`,
			map[string]any{"a": 0.0, "b": Word}},
		{"refs and allOf", `{"type":"object","required":["item","both"],"$defs":{"item":{"type":"object","required":["id"],"properties":{"id":{"type":"integer","minimum":1}}}},
			"properties":{"item":{"$ref":"#/$defs/item"},"both":{"allOf":[{"type":"object","required":["x"],"properties":{"x":{"type":"string"}}},{"required":["y"],"properties":{"y":{"type":"boolean"}}}]}}}`,
			map[string]any{"item": map[string]any{"id": 1.0}, "both": map[string]any{"x": Word, "y": false}}},
		{"recursive schema ends", `{"type":"object","required":["next"],"properties":{"next":{"$ref":"#"}}}`, nil},
		{"required without a property schema", `{"type":"object","required":["free"]}`, map[string]any{"free": Word}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Args(json.RawMessage(c.schema))
			if c.want != nil {
				// Round-trip through JSON so numbers compare as the server would see them.
				b, _ := json.Marshal(got)
				var norm map[string]any
				_ = json.Unmarshal(b, &norm)
				if diff := cmp.Diff(c.want, norm); diff != "" {
					t.Errorf("Args (-want +got):\n%s", diff)
				}
			}
			if c.schema == "" || !json.Valid([]byte(c.schema)) || c.name == "recursive schema ends" {
				return
			}
			// What Args makes must satisfy the schema it was made from.
			var doc any
			_ = json.Unmarshal([]byte(c.schema), &doc)
			sch, err := assert.CompileSchema(doc)
			if err != nil {
				t.Fatalf("schema does not compile: %v", err)
			}
			if err := sch.Validate(assert.Normalize(got)); err != nil && c.name != "not an object schema" {
				t.Errorf("made-up args %v do not validate: %s", got, assert.SchemaErrors(err))
			}
		})
	}
}

// FuzzArgs checks that no schema, however odd, makes Args panic or loop.
func FuzzArgs(f *testing.F) {
	for _, s := range []string{`{}`, `{"type":"object","required":["a"],"properties":{"a":{"$ref":"#/properties/a"}}}`,
		`{"type":"object","required":["a"],"properties":{"a":{"type":"array","minItems":1e9,"items":{"$ref":"#"}}}}`,
		`{"type":"object","required":[1,null,"x"],"properties":{"x":{"anyOf":[]}}}`,
		`{"type":"object","required":["a"],"properties":{"a":{"$ref":"#/$defs/w"}},"$defs":{"w":{"type":"array","minItems":16,"items":{"$ref":"#/$defs/w"}}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if m := Args(b); m == nil {
			t.Fatal("Args returned nil")
		}
	})
}

func TestMakerOptions(t *testing.T) {
	schema := `{"type":"object","$defs":{"n":{"type":"integer","maximum":50}},"required":["s","n","f","list","u"],"properties":{
		"s":{"type":"string"},"n":{"$ref":"#/$defs/n"},"f":{"type":"string","format":"email"},
		"list":{"type":"array","items":{"type":"number","minimum":-5}},"u":{"type":"string","format":"uuid"}}}`
	var root map[string]any
	if err := json.Unmarshal([]byte(schema), &root); err != nil {
		t.Fatal(err)
	}
	m := NewMaker(root, &Options{Word: "w", Number: 1, MinItems: 1, Formats: map[string]string{"email": "e@x.invalid"}})
	got := m.Value(root)
	want := map[string]any{"s": "w", "n": int64(1), "f": "e@x.invalid", "list": []any{1.0}, "u": "00000000-0000-4000-8000-000000000000"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Value (-want +got):\n%s", diff)
	}
	if r := m.Resolve(map[string]any{"anyOf": []any{map[string]any{"type": "null"}, map[string]any{"$ref": "#/$defs/n"}}}); r["maximum"] != 50.0 {
		t.Errorf("Resolve through anyOf and $ref = %v", r)
	}
}
