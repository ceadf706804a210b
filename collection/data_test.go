package collection

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadData(t *testing.T) {
	csvRows, err := ReadData("rows.csv", strings.NewReader("\ufeffuser,n,ok,ratio,note\nada,5,true,0.5,'7'\nbob,-2,no,1e3,\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	want := []DataRow{
		{Index: 1, Label: "row 1", Values: map[string]any{"user": "ada", "n": int64(5), "ok": true, "ratio": 0.5, "note": "7"}},
		{Index: 2, Label: "row 2", Values: map[string]any{"user": "bob", "n": int64(-2), "ok": "no", "ratio": 1000.0, "note": ""}},
	}
	if d := cmp.Diff(want, csvRows); d != "" {
		t.Errorf("CSV rows (-want +got):\n%s", d)
	}
	jsonRows, err := ReadData("rows", strings.NewReader(` [{"user":"ada","n":5,"x":1.5,"tags":["a",{"k":2}]},{"user":"bob","n":null}]`), "user")
	if err != nil {
		t.Fatal(err)
	}
	wantJSON := []DataRow{
		{Index: 1, Label: "ada", Values: map[string]any{"user": "ada", "n": int64(5), "x": 1.5, "tags": []any{"a", map[string]any{"k": int64(2)}}}},
		{Index: 2, Label: "bob", Values: map[string]any{"user": "bob", "n": nil}},
	}
	if d := cmp.Diff(wantJSON, jsonRows); d != "" {
		t.Errorf("JSON rows (-want +got):\n%s", d)
	}
	for _, tc := range []struct{ name, data, key, want string }{
		{"x.csv", "", "", "empty"},
		{"x.csv", "a,b\n1\n", "", "line 2"},
		{"x.csv", "a,a\n1,2\n", "", `column "a" appears twice`},
		{"x.csv", "a b\n1\n", "", "not a variable name"},
		{"x.csv", "a\n", "", "holds no rows"},
		{"x.csv", "a\n\"x\n", "", "line"},
		{"x.json", `{"a":1}`, "", "not a JSON array of objects"},
		{"x.json", `[1]`, "", "row 1 is not a JSON object"},
		{"x.json", `[{"a":1}] [`, "", "trailing data"},
		{"x.json", `[{"a b":1}]`, "", "not a variable name"},
		{"x.csv", "id\na\na\n", "id", `rows 1 and 2 have the same id "a"`},
		{"x.csv", "id,v\na,1\n,2\n", "id", "row 2 has no value in the key column"},
	} {
		if _, err := ReadData(tc.name, strings.NewReader(tc.data), tc.key); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadData(%s, %q) = %v, want %q", tc.name, tc.data, err, tc.want)
		}
	}
	if _, err := ReadData("big.csv", strings.NewReader("a\n"+strings.Repeat("1\n", MaxDataRows+1)), ""); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("too many rows: %v", err)
	}
}

// TestDataRowPrecedence checks a data row's values sit above the environment and --env-file
// and below --var, and are typed.
func TestDataRowPrecedence(t *testing.T) {
	doc := "server: testserver\nvariables: {a: coll, b: coll, c: coll, n: 0}\ntests: [{name: t, call: echo, with: {text: '{{a}}'}}]\n"
	c, err := Parse("x.yaml", []byte(doc), &LoadOptions{
		EnvFile: map[string]string{"a": "file", "b": "file"},
		Data:    map[string]any{"a": "row", "b": "row", "n": int64(5)},
		Vars:    map[string]string{"a": "var"},
	})
	if err != nil {
		t.Fatal(err)
	}
	v := c.Vars()
	for name, want := range map[string]any{"a": "var", "b": "row", "c": "coll", "n": int64(5)} {
		if got, _ := v.Lookup(name); got != want {
			t.Errorf("%s = %#v, want %#v", name, got, want)
		}
	}
}
