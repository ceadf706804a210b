package assert

import (
	"context"
	"errors"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const pathDoc = `{"items":[
 {"name":"echo","outputSchema":{"type":"object"},"n":3},
 {"name":"get-sum","n":0,"nullable":null,"flag":false},
 {"name":"it's","n":12}
],"count":3,"text":"hello"}`

// TestPathRFC9535 covers the filter forms of RFC 9535 that the Goessner dialect lacked or
// read differently: existence tests (true for a member that is null or false), single-quoted
// strings, comparisons, logical operators and functions.
func TestPathRFC9535(t *testing.T) {
	doc, err := DecodeJSON([]byte(pathDoc))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want any
	}{
		{`$.items[?(@.outputSchema)].name`, []any{"echo"}},
		{`$.items[?@.outputSchema].name`, []any{"echo"}},
		{`$.items[?(@.nullable)].name`, []any{"get-sum"}}, // exists, though null
		{`$.items[?@.flag].name`, []any{"get-sum"}},       // exists, though false
		{`$.items[?!@.outputSchema].name`, []any{"get-sum", "it's"}},
		{`$.items[?(@.name=='get-sum')].n`, []any{0.0}},
		{`$.items[?(@.name=="it's")].n`, []any{12.0}},
		{`$.items[?(@.name=='it\'s')].n`, []any{12.0}},
		{`$.items[?@.n > 1 && @.n < 10].name`, []any{"echo"}},
		{`$.items[?@.n == 0 || @.n >= 12].name`, []any{"get-sum", "it's"}},
		{`$.items[?length(@.name) == 7].name`, []any{"get-sum"}},
		{`$.items[?match(@.name, 'get-.*')].name`, []any{"get-sum"}},
		{`$.items[?search(@.name, 's')].name`, []any{"get-sum", "it's"}},
		{`$.items[-1].name`, "it's"},
		{`$.items[0:2].name`, []any{"echo", "get-sum"}},
		{`$..outputSchema.type`, []any{"object"}},
		{`$.items[?(@.missing)]`, []any{}}, // matches nothing: an empty list, no error
		// The Goessner dialect with gval expressions still works where RFC 9535 has no syntax.
		{`$.items[?(@.name =~ "^get")].name`, []any{"get-sum"}},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			got, err := Extract(context.Background(), doc, tc.path)
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestPathSaysWhereItStops: a singular path that selects nothing names the longest prefix
// that matched and what was there instead.
func TestPathSaysWhereItStops(t *testing.T) {
	doc, err := DecodeJSON([]byte(pathDoc))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path, want string
	}{
		{`$.item`, `^\$ has no member "item"; its members are count, items, text$`},
		{`$.items[0].outputschema`, `^\$\.items\[0\] has no member "outputschema"; its members are n, name, outputSchema$`},
		{`$.items[7]`, `^\$\.items is an array of 3 elements where \[7\] selects nothing$`},
		{`$.items.name`, `^\$\.items is an array of 3 elements, not an object: use an index or \[\*\]$`},
		{`$.text.length`, `^\$\.text is a string, where \["length"\] selects nothing$`},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			_, err := Extract(context.Background(), doc, tc.path)
			if !errors.Is(err, ErrNoMatch) {
				t.Fatalf("Extract = %v, want ErrNoMatch", err)
			}
			p, _ := CompilePath(tc.path)
			if why := p.Why(doc); !regexp.MustCompile(tc.want).MatchString(why) {
				t.Errorf("Why = %q, want %q", why, tc.want)
			}
		})
	}
}

func TestPathCompileErrors(t *testing.T) {
	for _, src := range []string{`items`, `$.items[?(@.name==)]`, `$.items[`} {
		if _, err := CompilePath(src); err == nil {
			t.Errorf("CompilePath(%q) succeeded", src)
		}
	}
}
