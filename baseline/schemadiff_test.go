package baseline

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ch builds an expected change; r marks it for review (the What then ends with the suffix).
func ch(breaking bool, where, path, what string) SchemaChange {
	return SchemaChange{Breaking: breaking, Where: where, Path: path, What: what}
}

// TestSchemaDiffCombinators runs every case both as an input and as an output schema: the
// same change, classified from the client's side (input) and the server's (output).
func TestSchemaDiffCombinators(t *testing.T) {
	type want struct {
		path, what string
		eff        effect
	}
	cases := []struct {
		name     string
		old, new string
		want     []want // in order; breaking follows from effect and direction
	}{
		// Nullable forms.
		{"type array to anyOf-null is no change",
			`{"type":["string","null"],"maxLength":5}`,
			`{"anyOf":[{"type":"string","maxLength":5},{"type":"null"}]}`, nil},
		{"anyOf-null to type array is no change",
			`{"type":"object","properties":{"n":{"anyOf":[{"type":"integer"},{"type":"null"}],"default":null,"title":"N"}}}`,
			`{"type":"object","properties":{"n":{"type":["integer","null"],"default":null,"title":"N"}}}`, nil},
		{"nullable enum forms are no change",
			`{"anyOf":[{"type":"string","enum":["a","b"]},{"type":"null"}]}`,
			`{"enum":["a","b",null]}`, nil},
		{"nullable order does not matter",
			`{"anyOf":[{"type":"null"},{"type":"string"}]}`,
			`{"oneOf":[{"type":"string"},{"type":"null"}]}`, nil},
		{"optional field via anyOf-null made non-nullable",
			`{"type":"object","properties":{"q":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null}}}`,
			`{"type":"object","properties":{"q":{"type":"string","default":null}}}`,
			[]want{{"q", "anyOf branch removed: null", tighten}}},
		{"optional field made nullable via anyOf",
			`{"type":"object","properties":{"q":{"type":"string"}}}`,
			`{"type":"object","properties":{"q":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`,
			[]want{{"q", "anyOf branch added: null", loosen}}},
		{"optional anyOf-null field became required",
			`{"type":"object","properties":{"q":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`,
			`{"type":"object","properties":{"q":{"anyOf":[{"type":"string"},{"type":"null"}]}},"required":["q"]}`,
			[]want{{"q", "property became required", tighten}}},
		{"change inside the nullable branch",
			`{"anyOf":[{"type":"string","maxLength":10},{"type":"null"}]}`,
			`{"anyOf":[{"type":"string","maxLength":5},{"type":"null"}]}`,
			[]want{{"<string>", "maxLength 10 → 5 tightened", tighten}}},
		// Enums inside unions.
		{"enum inside anyOf narrowed",
			`{"anyOf":[{"type":"string","enum":["a","b","c"]},{"type":"null"}]}`,
			`{"anyOf":[{"type":"string","enum":["a","b"]},{"type":"null"}]}`,
			[]want{{"<string>", `enum narrowed: "c" removed`, tighten}}},
		{"enum inside anyOf widened",
			`{"anyOf":[{"type":"string","enum":["a"]},{"type":"integer"}]}`,
			`{"anyOf":[{"type":"string","enum":["a","z"]},{"type":"integer"}]}`,
			[]want{{"<string>", `enum widened: "z" added`, loosen}}},
		// Branches added and removed.
		{"anyOf branch added",
			`{"anyOf":[{"type":"string"},{"type":"integer"}]}`,
			`{"anyOf":[{"type":"string"},{"type":"integer"},{"type":"boolean"}]}`,
			[]want{{"(root)", "anyOf branch added: boolean", loosen}}},
		{"anyOf branch removed",
			`{"anyOf":[{"type":"string"},{"type":"integer"},{"type":"boolean"}]}`,
			`{"anyOf":[{"type":"string"},{"type":"integer"}]}`,
			[]want{{"(root)", "anyOf branch removed: boolean", tighten}}},
		{"plain type became a union",
			`{"type":"string"}`,
			`{"anyOf":[{"type":"string"},{"type":"integer"}]}`,
			[]want{{"(root)", "anyOf branch added: integer", loosen}}},
		{"union became a plain type",
			`{"anyOf":[{"type":"string"},{"type":"integer"}]}`,
			`{"type":"string"}`,
			[]want{{"(root)", "anyOf branch removed: integer", tighten}}},
		{"branch replaced by a wider one",
			`{"anyOf":[{"type":"string"},{"type":"integer"}]}`,
			`{"anyOf":[{"type":"string"},{"type":"number"}]}`,
			[]want{
				{"(root)", "anyOf branch removed: integer (another branch still accepts its values)", neutral},
				{"(root)", "anyOf branch added: number", loosen},
			}},
		{"oneOf branch added (disjoint types)",
			`{"oneOf":[{"type":"string"},{"type":"integer"}]}`,
			`{"oneOf":[{"type":"string"},{"type":"integer"},{"type":"array","items":{"type":"string"}}]}`,
			[]want{{"(root)", "oneOf branch added: array", loosen}}},
		{"oneOf branch removed (tagged objects)",
			`{"oneOf":[{"type":"object","properties":{"kind":{"const":"circle"},"r":{"type":"number"}},"required":["kind"]},{"type":"object","properties":{"kind":{"const":"square"},"side":{"type":"number"}},"required":["kind"]}]}`,
			`{"oneOf":[{"type":"object","properties":{"kind":{"const":"circle"},"r":{"type":"number"}},"required":["kind"]}]}`,
			[]want{{"(root)", `oneOf branch removed: object kind="square"`, tighten}}},
		{"tagged oneOf branch changed is matched by its tag",
			`{"oneOf":[{"type":"object","properties":{"kind":{"const":"circle"},"r":{"type":"number"}},"required":["kind"]},{"type":"object","properties":{"kind":{"const":"square"},"side":{"type":"number"}},"required":["kind"]}]}`,
			`{"oneOf":[{"type":"object","properties":{"kind":{"const":"circle"},"r":{"type":"number"}},"required":["kind","r"]},{"type":"object","properties":{"kind":{"const":"square"},"side":{"type":"number"}},"required":["kind"]}]}`,
			[]want{{`<object kind="circle">.r`, "property became required", tighten}}},
		{"overlapping oneOf branch added is left for review",
			`{"oneOf":[{"type":"string"},{"type":"integer"}]}`,
			`{"oneOf":[{"type":"string"},{"type":"integer"},{"type":"string","maxLength":3}]}`,
			[]want{{"(root)", "oneOf branches changed, and some of them overlap, so which values match exactly one branch was not analysed", review}}},
		// $ref.
		{"$ref to $defs with a changed property",
			`{"type":"object","properties":{"user":{"$ref":"#/$defs/User"}},"$defs":{"User":{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}}}}}`,
			`{"type":"object","properties":{"user":{"$ref":"#/$defs/User"}},"$defs":{"User":{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"string"}}}}}`,
			[]want{{"user.age", "type changed from integer to string", changed}}},
		{"$ref renamed, definitions vs $defs, same schema",
			`{"type":"object","properties":{"user":{"$ref":"#/definitions/User"}},"definitions":{"User":{"type":"object","properties":{"name":{"type":"string"}}}}}`,
			`{"type":"object","properties":{"user":{"$ref":"#/$defs/Person"}},"$defs":{"Person":{"type":"object","properties":{"name":{"type":"string"}}}}}`, nil},
		{"$ref inlined is no change",
			`{"type":"object","properties":{"p":{"$ref":"#/$defs/P","description":"point"}},"$defs":{"P":{"type":"object","properties":{"x":{"type":"number"}}}}}`,
			`{"type":"object","properties":{"p":{"type":"object","description":"point","properties":{"x":{"type":"number"}}}}}`, nil},
		{"JSON pointer escapes",
			`{"type":"object","properties":{"v":{"$ref":"#/$defs/a~1b~0c"}},"$defs":{"a/b~c":{"type":"string"}}}`,
			`{"type":"object","properties":{"v":{"$ref":"#/$defs/a~1b~0c"}},"$defs":{"a/b~c":{"type":"integer"}}}`,
			[]want{{"v", "type changed from string to integer", changed}}},
		{"$ref into a nullable anyOf",
			`{"type":"object","properties":{"m":{"anyOf":[{"$ref":"#/$defs/Mode"},{"type":"null"}]}},"$defs":{"Mode":{"type":"string","enum":["fast","slow"]}}}`,
			`{"type":"object","properties":{"m":{"anyOf":[{"$ref":"#/$defs/Mode"},{"type":"null"}]}},"$defs":{"Mode":{"type":"string","enum":["fast"]}}}`,
			[]want{{"m<string>", `enum narrowed: "slow" removed`, tighten}}},
		{"recursive $ref with a change",
			`{"$ref":"#/$defs/Node","$defs":{"Node":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/Node"}}}}}}`,
			`{"$ref":"#/$defs/Node","$defs":{"Node":{"type":"object","properties":{"name":{"type":"string","maxLength":64},"children":{"type":"array","items":{"$ref":"#/$defs/Node"}}}}}}`,
			[]want{{"name", "maxLength none → 64 tightened", tighten}}},
		{"recursive $ref to the root, unchanged",
			`{"type":"object","properties":{"next":{"anyOf":[{"$ref":"#"},{"type":"null"}]}}}`,
			`{"type":"object","properties":{"next":{"anyOf":[{"$ref":"#"},{"type":"null"}]}}}`, nil},
		{"remote $ref is left for review, named",
			`{"type":"object","properties":{"geo":{"$ref":"https://example.com/geo.json"}}}`,
			`{"type":"object","properties":{"geo":{"$ref":"https://example.com/geo2.json"}}}`,
			[]want{{"geo", `before: $ref "https://example.com/geo.json" is remote; now: $ref "https://example.com/geo2.json" is remote`, review}}},
		{"remote $ref unchanged is no change",
			`{"type":"object","properties":{"geo":{"$ref":"https://example.com/geo.json"}}}`,
			`{"type":"object","properties":{"geo":{"$ref":"https://example.com/geo.json"}}}`, nil},
		{"dangling $ref is left for review",
			`{"type":"object","properties":{"a":{"type":"string"}}}`,
			`{"type":"object","properties":{"a":{"$ref":"#/$defs/Missing"}}}`,
			[]want{{"a", `$ref "#/$defs/Missing" does not resolve in this schema`, review}}},
		{"circular $ref chain is left for review",
			`{"type":"object","properties":{"a":{"type":"string"}}}`,
			`{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}},"$defs":{"A":{"$ref":"#/$defs/B"},"B":{"$ref":"#/$defs/A"}}}`,
			[]want{{"a", `$ref "#/$defs/A" is circular (a chain of 32 references)`, review}}},
		// allOf.
		{"allOf of plain objects is merged",
			`{"allOf":[{"$ref":"#/$defs/Base"},{"type":"object","properties":{"extra":{"type":"string"}}}],"$defs":{"Base":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}}}`,
			`{"allOf":[{"$ref":"#/$defs/Base"},{"type":"object","properties":{"extra":{"type":"string"}},"required":["extra"]}],"$defs":{"Base":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}}}`,
			[]want{{"extra", "property became required", tighten}}},
		{"allOf merged equals the flat object",
			`{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"integer"}}}]}`,
			`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a"]}`, nil},
		{"allOf property in two branches",
			`{"allOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"properties":{"a":{"type":"string"}}}]}`,
			`{"allOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"properties":{"a":{"type":"integer"}}}]}`,
			[]want{{"a", "allOf changed: its branches are not all plain object schemas, so they were not merged", review}}},
		{"allOf of non-objects is left for review",
			`{"allOf":[{"type":"string"},{"minLength":1}]}`,
			`{"allOf":[{"type":"string"},{"minLength":2}]}`,
			[]want{{"(root)", "allOf changed: its branches are not all plain object schemas, so they were not merged", review}}},
		{"single-branch allOf around a $ref with a description",
			`{"type":"object","properties":{"u":{"allOf":[{"$ref":"#/$defs/U"}],"description":"the user"}},"$defs":{"U":{"type":"object","properties":{"n":{"type":"string"}}}}}`,
			`{"type":"object","properties":{"u":{"$ref":"#/$defs/U","description":"the user"}},"$defs":{"U":{"type":"object","properties":{"n":{"type":"string"}}}}}`, nil},
		// Annotations.
		{"title changed is compatible, default changed is for review",
			`{"type":"object","properties":{"n":{"type":"integer","title":"N","default":1}}}`,
			`{"type":"object","properties":{"n":{"type":"integer","title":"Count","default":2}}}`,
			[]want{{"n", "title changed", neutral}, {"n", "default changed", review}}},
		// Mixed nodes.
		{"anyOf added next to other keywords is left for review",
			`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}}}`,
			`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"anyOf":[{"required":["a"]},{"required":["b"]}]}`,
			[]want{{"(root)", "anyOf added next to other keywords (a further constraint)", review}}},
	}
	for _, tc := range cases {
		for _, dir := range []direction{input, output} {
			name := tc.name + "/input"
			where := "input"
			if dir == output {
				name, where = tc.name+"/output", "output"
			}
			t.Run(name, func(t *testing.T) {
				got := diffSchema(dir, json.RawMessage(tc.old), json.RawMessage(tc.new))
				var want []SchemaChange
				for _, w := range tc.want {
					what := w.what
					if w.eff == review {
						what += reviewSuffix
					}
					if dir == output && what == "property became required" {
						what = "property is now always present"
					}
					breaking := w.eff == changed || w.eff == tighten && dir == input || w.eff == loosen && dir == output
					want = append(want, ch(breaking, where, w.path, what))
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
				// The reverse change is the opposite move: a tightening one way loosens the other.
				if len(tc.want) == 0 {
					if rev := diffSchema(dir, json.RawMessage(tc.new), json.RawMessage(tc.old)); len(rev) != 0 {
						t.Errorf("reverse of an equivalence reports %+v", rev)
					}
				}
			})
		}
	}
}

// TestSchemaDiffBounded feeds schemas built to explode (deep nesting, a wide DAG of $ref, a
// recursive union) and expects an answer, with any limit reported for review.
func TestSchemaDiffBounded(t *testing.T) {
	deep := strings.Repeat(`{"type":"object","properties":{"a":`, 200) + `{"type":"string"}` + strings.Repeat(`}}`, 200)
	deep2 := strings.Repeat(`{"type":"object","properties":{"a":`, 200) + `{"type":"integer"}` + strings.Repeat(`}}`, 200)
	var defs1, defs2 strings.Builder
	for i := 0; i < 30; i++ {
		next := `{"type":"string"}`
		if i < 29 {
			next = `{"$ref":"#/$defs/d` + strconv.Itoa(i+1) + `"}`
		}
		defs1.WriteString(`"d` + strconv.Itoa(i) + `":{"anyOf":[` + next + `,` + next + `,{"type":"object","properties":{"x":` + next + `,"y":` + next + `}}]},`)
		defs2.WriteString(`"d` + strconv.Itoa(i) + `":{"anyOf":[` + next + `,{"type":"object","properties":{"x":` + next + `,"y":` + next + `}}]},`)
	}
	wide1 := `{"$ref":"#/$defs/d0","$defs":{` + strings.TrimSuffix(defs1.String(), ",") + `}}`
	wide2 := `{"$ref":"#/$defs/d0","$defs":{` + strings.TrimSuffix(defs2.String(), ",") + `}}`
	selfRef := `{"$defs":{"X":{"$ref":"#/$defs/X","minLength":1}},"$ref":"#/$defs/X"}`
	for _, tc := range []struct{ name, a, b, wantReview string }{
		{"deep nesting", deep, deep2, "schema nested deeper than 64 levels"},
		{"exponential $ref DAG", wide1, wide2, "the schemas are too large to compare fully"},
		{"$ref to itself with a sibling", selfRef, `{"type":"string"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, dir := range []direction{input, output} {
				got := diffSchema(dir, json.RawMessage(tc.a), json.RawMessage(tc.b))
				again := diffSchema(dir, json.RawMessage(tc.a), json.RawMessage(tc.b))
				if !cmp.Equal(got, again) {
					t.Fatalf("not deterministic:\n%+v\n%+v", got, again)
				}
				if len(got) == 0 {
					t.Fatalf("no change reported")
				}
				if tc.wantReview != "" {
					found := false
					for _, c := range got {
						found = found || strings.Contains(c.What, tc.wantReview) && strings.HasSuffix(c.What, reviewSuffix) && !c.Breaking
					}
					if !found {
						t.Errorf("want a review of %q, got %+v", tc.wantReview, got)
					}
				}
			}
		})
	}
}
