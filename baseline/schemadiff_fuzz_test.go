package baseline

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzDiffSchema feeds two arbitrary documents to the schema diff, as input and output schemas:
// it must not panic or hang, must answer the same twice, must never call a change it could not
// analyse breaking, and must find nothing breaking between a schema and itself.
func FuzzDiffSchema(f *testing.F) {
	for _, s := range [][2]string{
		{`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`, `{"type":"object","properties":{"q":{"type":["string","null"]}}}`},
		{`{"anyOf":[{"type":"string"},{"type":"null"}]}`, `{"type":["string","null"]}`},
		{`{"oneOf":[{"type":"object","properties":{"k":{"const":"a"}},"required":["k"]},{"type":"integer"}]}`, `{"oneOf":[{"type":"integer"}]}`},
		{`{"$ref":"#/$defs/N","$defs":{"N":{"type":"object","properties":{"c":{"type":"array","items":{"$ref":"#/$defs/N"}}}}}}`, `{"$ref":"#"}`},
		{`{"allOf":[{"$ref":"#/definitions/B"},{"properties":{"x":{}}}],"definitions":{"B":{"type":"object","required":["id"]}}}`, `{"$ref":"https://example.com/s.json"}`},
		{`{"$defs":{"A":{"$ref":"#/$defs/A","minLength":1}},"$ref":"#/$defs/A"}`, `{"$ref":"#/$defs/a~1b","$defs":{"a/b":true}}`},
		{`true`, `[1]`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		if len(a) > 1<<16 || len(b) > 1<<16 {
			return
		}
		for _, dir := range []direction{input, output} {
			got := diffSchema(dir, a, b)
			if again := diffSchema(dir, a, b); !cmp.Equal(got, again) {
				t.Fatalf("not deterministic:\n%+v\n%+v", got, again)
			}
			for _, c := range got {
				if c.Path == "" || c.What == "" || c.Where != map[direction]string{input: "input", output: "output"}[dir] {
					t.Fatalf("malformed change %+v", c)
				}
				if c.Breaking && strings.HasSuffix(c.What, reviewSuffix) {
					t.Fatalf("a change left for review is labelled breaking: %+v", c)
				}
			}
			if json.Valid(a) {
				for _, c := range diffSchema(dir, a, a) {
					if c.Breaking {
						t.Fatalf("schema differs from itself: %+v", c)
					}
				}
			}
		}
	})
}
