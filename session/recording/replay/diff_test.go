package replay

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParsePath(t *testing.T) {
	for _, tc := range []struct {
		in      string
		path    []string
		matches bool
		err     string
	}{
		{"$", []string{"result"}, true, ""},
		{"$.result._meta", []string{"result", "_meta", "x"}, true, ""},
		{"$.result._meta", []string{"result", "content"}, false, ""},
		{"$.result.content[0].text", []string{"result", "content", "[0]", "text"}, true, ""},
		{"$.result.content[1]", []string{"result", "content", "[0]", "text"}, false, ""},
		{"$.result.content[*].text", []string{"result", "content", "[3]", "text"}, true, ""},
		{"$.result.*.text", []string{"result", "x", "text"}, true, ""},
		{"$..progressToken", []string{"params", "_meta", "progressToken"}, true, ""},
		{"$..progressToken", []string{"params", "progressTokens"}, false, ""},
		{"$['a.b']", []string{"a.b"}, true, ""},
		{"result", nil, false, "must start with $"},
		{"$.a[", nil, false, "unclosed ["},
		{"$.a[x]", nil, false, "neither an index"},
		{"$.a..", nil, false, "empty member name"},
		{"$x", nil, false, "expected . or ["},
	} {
		p, err := ParsePath(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParsePath(%q) = %v, want error %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParsePath(%q): %v", tc.in, err)
			continue
		}
		if got := p.matches(tc.path); got != tc.matches {
			t.Errorf("%q matches %v = %v, want %v", tc.in, tc.path, got, tc.matches)
		}
	}
}

func TestDiff(t *testing.T) {
	meta, _ := ParsePath("$.result._meta")
	for _, tc := range []struct {
		name   string
		a, b   string
		ignore []Path
		want   []Change
	}{
		{"equal, other order", `{"a":1,"b":[1,2]}`, `{"b":[1,2],"a":1.0}`, nil, nil},
		{"scalar", `{"a":"x"}`, `{"a":"y"}`, nil, []Change{{Path: "$.a", Recorded: []byte(`"x"`), Replayed: []byte(`"y"`)}}},
		{"member gone and new", `{"a":1}`, `{"b":1}`, nil, []Change{{Path: "$.a", Recorded: []byte(`1`)}, {Path: "$.b", Replayed: []byte(`1`)}}},
		{"array longer", `[1]`, `[1,{"k":true}]`, nil, []Change{{Path: "$[1]", Replayed: []byte(`{"k":true}`)}}},
		{"type", `{"a":{}}`, `{"a":[]}`, nil, []Change{{Path: "$.a", Recorded: []byte(`{}`), Replayed: []byte(`[]`)}}},
		{"odd name", `{"a b":1}`, `{"a b":2}`, nil, []Change{{Path: "$['a b']", Recorded: []byte(`1`), Replayed: []byte(`2`)}}},
		{"ignored", `{"result":{"_meta":{"t":1},"x":1}}`, `{"result":{"_meta":{"t":2},"x":1}}`, []Path{meta}, nil},
		{"not json", `{`, `}`, nil, []Change{{Path: "$", Recorded: []byte(`"{"`), Replayed: []byte(`"}"`)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Diff([]byte(tc.a), []byte(tc.b), tc.ignore)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Diff (-want +got):\n%s", d)
			}
		})
	}
}

func TestDiffBounded(t *testing.T) {
	a, b := "[", "["
	for i := range 200 {
		if i > 0 {
			a, b = a+",", b+","
		}
		a, b = a+"1", b+"2"
	}
	got := Diff([]byte(a+"]"), []byte(b+"]"), nil)
	if len(got) != maxChanges+1 || got[maxChanges].Path != "…" {
		t.Errorf("Diff of 200 changes listed %d, last %+v", len(got), got[len(got)-1])
	}
}
