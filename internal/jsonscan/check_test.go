package jsonscan

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// TestScanJSONAgreesWithEncodingJSON checks the scanner against the standard library on
// valid and invalid texts.
func TestScanJSONAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range []string{
		`{}`, `[]`, `0`, `-0.5e+3`, `"a\"b\\c\u00e9\ud83d\ude00"`, `{"a":[1,{"b":null}],"c":true}`, ` [ 1 , 2 ] `,
		`{`, `[1,]`, `{"a":1,}`, `01`, `1.`, `.5`, `1e`, `"\x"`, `"\u12"`, `tru`, `nul`, `{"a" 1}`, `[1 2]`, `{} {}`,
		"\"a\tb\"", `{"a":1}}`, `[[[`, `NaN`, `'a'`, `{a:1}`, "\"\xff\"",
	} {
		_, err := Check([]byte(s))
		if got, want := err == nil, json.Valid([]byte(s)) && utf8.ValidString(s); got != want {
			t.Errorf("Check(%q) valid = %v, encoding/json says %v (%v)", s, got, want, err)
		}
	}
	info, err := Check([]byte(`{"a":{"b":[1,[2]]},"a":0}`))
	if err != nil || info.Depth != 4 || !info.DupKey {
		t.Errorf("info = %+v, %v; want depth 4 and a repeated key", info, err)
	}
	deep := strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)
	if info, err := Check([]byte(deep)); err != nil || info.Depth != 100_000 {
		t.Errorf("100000 levels: %+v %v", info, err)
	}
}

func TestScanSpans(t *testing.T) {
	b := []byte(`{"a":1, "b":{"c":[{"d":2}],"e":"x"} ,"f":null}`)
	spans, ok := ScanSpans(b, 3)
	if !ok {
		t.Fatal("not JSON")
	}
	var got [][]string
	for _, obj := range spans {
		var members []string
		for _, s := range obj {
			members = append(members, string(b[s.Start:s.End]))
		}
		got = append(got, members)
	}
	want := [][]string{
		{`"a":1`, `"b":{"c":[{"d":2}],"e":"x"}`, `"f":null`},
		{`"c":[{"d":2}]`, `"e":"x"`},
		{`"d":2`},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("spans (-want +got):\n%s", d)
	}
	if spans, _ := ScanSpans(b, 0); len(spans) != 1 {
		t.Errorf("depth 0: %d objects, want the outermost only", len(spans))
	}
	if _, ok := ScanSpans([]byte(`{"a":}`), 3); ok {
		t.Error("invalid JSON accepted")
	}
}

func TestCheckSays(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1`:     "at byte 6: unexpected end of input inside a container",
		`[1.]`:       "at byte 3: invalid fraction",
		`[1e+]`:      "at byte 4: invalid exponent",
		`[-x]`:       "at byte 2: invalid number",
		`[tru]`:      "at byte 1: invalid literal",
		`"\q"`:       `at byte 1: invalid escape \q`,
		`"\u12"`:     `at byte 1: invalid \u escape`,
		"\"a\xffb\"": "at byte 2: invalid UTF-8",
		`{"a":1} x`:  "at byte 8: trailing data after the value",
		`{"a" 1}`:    "at byte 5: expected ':' after a member name",
		`[1 2]`:      "at byte 3: expected ',' or the end of the container, got '2'",
	} {
		_, err := Check([]byte(in))
		if err == nil || !errors.Is(err, ErrSyntax) || err.Error() != "invalid JSON: "+want {
			t.Errorf("Check(%q) = %v, want invalid JSON: %s", in, err, want)
		}
	}
	info, err := Check([]byte(`{"a":"\ud800","b":"\ud83d\ude00"}`))
	if err != nil || !info.LoneSurrogate || info.DupKey || info.Depth != 1 {
		t.Errorf("lone surrogate: %+v %v", info, err)
	}
}

func TestDecodeString(t *testing.T) {
	for in, want := range map[string]string{`"a"`: "a", `"\u0061\n"`: "a\n", `"\ud800x"`: "\ufffdx", `"\ud83d\ude00"`: "😀"} {
		if got, ok := DecodeString([]byte(in)); !ok || got != want {
			t.Errorf("DecodeString(%s) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{``, `"`, `"a"b"`, `"a" `, `1`, "\"\xff\"", `"\x"`} {
		if got, ok := DecodeString([]byte(in)); ok {
			t.Errorf("DecodeString(%q) = %q, want not ok", in, got)
		}
	}
}

func TestMembers(t *testing.T) {
	got := Members([]byte(` {"a":1, "b":{"c":[2]}, "\u0061":"last"} `))
	want := map[string]string{"a": `"last"`, "b": `{"c":[2]}`}
	if len(got) != len(want) {
		t.Fatalf("Members = %q", got)
	}
	for k, v := range want {
		if string(got[k]) != v {
			t.Errorf("Members[%s] = %s, want %s", k, got[k], v)
		}
	}
	if Members([]byte(`[1]`)) != nil {
		t.Error("an array has members")
	}
}
