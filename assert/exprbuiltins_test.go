package assert

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/expr-lang/expr"
	"github.com/google/go-cmp/cmp"
)

// semanticsEnv is an environment of normal size.
func semanticsEnv() ExprEnv {
	var doc any
	if err := json.Unmarshal([]byte(`{
		"items": [3, 1, 2, 1, 2.5],
		"obj": {"a": 1, "b": "two", "c": [true, null]},
		"pairs": [["a", 1], ["b", [2]]],
		"nested": [[1, [2, [3]]], 4, []],
		"s": "Hello <World> & \"q\"\t\u2028",
		"deep": {"a": [[], {}, [{"b": [1, {"c": {}}]}]]}
	}`), &doc); err != nil {
		panic(err)
	}
	return ExprEnv{Response: doc, Text: "a,b,,c\nd é", Vars: map[string]any{"n": 2.0}}
}

// TestExprBuiltinsKeepSemantics: at normal sizes every builtin the budget checks returns what
// expr's own returns, errors included.
func TestExprBuiltinsKeepSemantics(t *testing.T) {
	srcs := []string{
		`split("a,b,,c", ",")`, `split(text, "")`, `split(text, ",", 2)`, `split(text, ",", 0)`,
		`split(text, ",", -1)`, `split("", "")`, `split("", ",")`, `split(text, "", vars.n)`,
		`split(text, ",,")`, `splitAfter(text, ",")`, `splitAfter(text, "", 3)`, `splitAfter("", "")`,
		`repeat("ab", 3)`, `repeat("", 5)`, `repeat("x", 0)`, `repeat("x", -1)`, `repeat("é", vars.n)`,
		`upper(text)`, `lower("ÀBİ")`, `upper(response.s)`,
		`toBase64(text)`, `fromBase64("aGk=")`, `fromBase64("!")`,
		`string(response.obj)`, `string(1..3)`, `string(response.items)`, `string(text)`, `string(nil)`,
		`toJSON(response)`, `toJSON([])`, `toJSON({})`, `toJSON(response.deep)`, `toJSON(response.s)`,
		`toJSON(1.5e300)`, `toJSON(1e-7)`, `toJSON(nil)`, `toJSON(1..3)`, `toJSON(split(text, ","))`,
		`toJSON(groupBy(response.items, # > 1))`, `toJSON(toPairs({"a": 1}))`,
		`fromJSON("{\"a\":[1,{\"b\":null}]}")`, `fromJSON("[1,")`, `fromJSON(toJSON(response))`,
		`int("42")`, `int("x")`, `int(2.7)`, `float("2.5")`, `float("y")`,
		`duration("1h30m")`, `duration("soon")`, `string(date("2024-01-02"))`, `date("nope")`,
		`string(date("2024-01-02 10:00:00", "2006-01-02 15:04:05", "UTC"))`, `string(timezone("UTC"))`,
		`timezone("Nowhere/Never")`, `string(date(timezone("UTC"), "2024-01-02"))`, `toJSON(timezone("UTC"))`,
		`sort(keys(response.obj))`, `len(values(response.obj))`, `len(toPairs(response.obj))`,
		`fromPairs(response.pairs)`, `keys(response.items)`,
		`reverse(response.items)`, `sort(response.items)`, `sort(response.items, "desc")`, `sort(split(text, ","))`,
		`uniq(response.items)`, `uniq([1, 1.0, "1", nil, nil])`, `uniq("x")`,
		`concat(response.items, [9], [])`, `flatten(response.nested)`, `median(response.items)`, `median([1, 2], [3])`,
		`map(response.items, # * 2)`, `sortBy(response.items, -#)`, `groupBy(response.items, # > 1)`,
		`filter(response.items, # > 1)`, `map(1..3, [#, {"n": #}])`,
		`text + "!"`, `"a" + "b"`, `1 + 2`, `1.5 + vars.n`, `string(date("2024-01-02") + duration("1h"))`,
		`reduce(1..4, #acc + #, 0)`, `"x" + string(len(text))`,
	}
	env := semanticsEnv()
	for _, src := range srcs {
		t.Run(src, func(t *testing.T) {
			stock, stockErr := expr.Compile(src, expr.Env(ExprEnv{}))
			prog, err := compileChecked(src, DefaultExprLimits())
			if (err != nil) != (stockErr != nil) {
				t.Fatalf("compile: err = %v, expr's err = %v", err, stockErr)
			}
			if err != nil {
				return
			}
			want, wantErr := expr.Run(stock, env)
			got, gotErr := runGuarded(context.Background(), prog, env, DefaultExprLimits())
			if (gotErr != nil) != (wantErr != nil) {
				t.Fatalf("err = %v, expr's err = %v", gotErr, wantErr)
			}
			if wantErr != nil {
				return
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("differs from expr's own (-expr +guarded):\n%s", diff)
			}
		})
	}
}

// TestExprJoinReplace: join and replace are ours (join takes any items), budget-checked.
func TestExprJoinReplace(t *testing.T) {
	tests := []struct {
		src  string
		want any
	}{
		{`join(["a", "b"], "-")`, "a-b"},
		{`join([1, true, "x", nil])`, "1truexnull"},
		{`join(split("a,b", ","), "+")`, "a+b"},
		{`join([])`, ""},
		{`join([{"k": [1]}], ";")`, `{"k":[1]}`},
		{`replace("aXbX", "X", "-")`, "a-b-"},
		{`replace("ab", "", "-")`, "-a-b-"},
		{`replace("ab", "z", "-")`, "ab"},
		{`replace("ééé", "é", "")`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			prog, err := compileChecked(tt.src, DefaultExprLimits())
			if err != nil {
				t.Fatal(err)
			}
			got, err := runGuarded(context.Background(), prog, ExprEnv{}, DefaultExprLimits())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestIndentedSize: the size toJSON checks before it indents is the size json.Indent gives.
func TestIndentedSize(t *testing.T) {
	for _, src := range []string{
		`null`, `1`, `"a"`, `[]`, `{}`, `[1]`, `[[]]`, `[{},[]]`, `{"a":1,"b":[1,2,{"c":"d"}]}`,
		`{"a\"b":"[{,:}]\\"}`, `[[[[[[1]]]]]]`, `{"":{"":{"":[]}}}`, `"\u003c\u0026"`,
	} {
		var want bytes.Buffer
		if err := json.Indent(&want, []byte(src), "", "  "); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if got := indentedSize([]byte(src), 2, 1<<20); got != want.Len() {
			t.Errorf("indentedSize(%s) = %d, json.Indent gives %d bytes", src, got, want.Len())
		}
	}
}

// FuzzIndentedSize checks indentedSize against json.Indent on any JSON value.
func FuzzIndentedSize(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":[]}],"c":"x\"y"}`, `[[],{},[{}]]`, `"\\"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var v any
		if json.Unmarshal([]byte(s), &v) != nil {
			return
		}
		compact, err := json.Marshal(v)
		if err != nil {
			return
		}
		var want bytes.Buffer
		if err := json.Indent(&want, compact, "", "  "); err != nil {
			t.Fatal(err)
		}
		if got := indentedSize(compact, 2, 1<<30); got != want.Len() {
			t.Errorf("indentedSize(%s) = %d, json.Indent gives %d", compact, got, want.Len())
		}
	})
}
