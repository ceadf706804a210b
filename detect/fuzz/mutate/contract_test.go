package mutate

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestJudge(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct {
		frame   string
		strict  bool
		request bool
		why     string // a fragment of Why when not strict
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, true, true, ""},
		{` {"jsonrpc":"2.0","id":"a","method":"x/y","params":{}} `, true, true, ""},
		{`{"jsonrpc":"2.0","method":"notifications/x"}`, true, false, ""},
		{`{"jsonrpc":"2.0","id":-9007199254740991,"method":"m"}`, true, true, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"progressToken":"t"}}}`, true, true, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":` + deep(62) + `}}`, true, true, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"ping\u0000"}`, true, true, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":` + deep(63) + `}}`, false, false, "nested 65 levels"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"`, false, false, "not one JSON value"},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}", false, false, "UTF-8"},
		{"\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", false, false, "byte order mark"},
		{"{\"jsonrpc\":\"2.0\",\n\"id\":1,\"method\":\"ping\"}", false, false, "line break"},
		{`{"jsonrpc":"1.0","id":1,"method":"ping"}`, false, false, `"jsonrpc"`},
		{`{"id":1,"method":"ping"}`, false, false, `"jsonrpc"`},
		{`{"jsonrpc":"2.0","id":1,"method":5}`, false, false, "method is not a string"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`, false, false, "params"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}`, false, false, "params"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":"x"}}`, false, false, "_meta"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"progressToken":1.5}}}`, false, false, "_meta"},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, false, false, "id"},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, false, false, "id"},
		{`{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}`, false, false, "id"},
		{`{"jsonrpc":"2.0","id":1,"method":"notifications/initialized"}`, false, false, "notification with an id"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","id":2}`, false, false, "repeats"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"s":"\ud800"}}`, false, false, "surrogate"},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, false, false, "result"},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, false, false, "batch"},
		{`"ping"`, false, false, "not a JSON object"},
		{`{"jsonrpc":"2.0","id":1,"method":"m","params":{"s":"` + strings.Repeat("a", StrictMaxSize) + `"}}`, false, false, "larger than"},
	}
	for _, tt := range tests {
		c := Judge([]byte(tt.frame))
		if c.Strict != tt.strict || c.Request != tt.request || !strings.Contains(c.Why, tt.why) {
			t.Errorf("Judge(%.80q) = %+v, want strict %v request %v why ~%q", tt.frame, c, tt.strict, tt.request, tt.why)
		}
	}
	if c := Judge([]byte(`{"jsonrpc":"2.0","id":"x","method":"tools/call"}`)); string(c.ID) != `"x"` || c.Method != "tools/call" {
		t.Errorf("id and method: %+v", c)
	}
}

// TestScanJSONAgreesWithEncodingJSON checks the scanner against the standard library on
// valid and invalid texts.
func TestScanJSONAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range []string{
		`{}`, `[]`, `0`, `-0.5e+3`, `"a\"b\\c\u00e9\ud83d\ude00"`, `{"a":[1,{"b":null}],"c":true}`, ` [ 1 , 2 ] `,
		`{`, `[1,]`, `{"a":1,}`, `01`, `1.`, `.5`, `1e`, `"\x"`, `"\u12"`, `tru`, `nul`, `{"a" 1}`, `[1 2]`, `{} {}`,
		"\"a\tb\"", `{"a":1}}`, `[[[`, `NaN`, `'a'`, `{a:1}`, "\"\xff\"",
	} {
		_, err := scanJSON([]byte(s))
		if got, want := err == nil, json.Valid([]byte(s)) && utf8.ValidString(s); got != want {
			t.Errorf("scanJSON(%q) valid = %v, encoding/json says %v (%v)", s, got, want, err)
		}
	}
	info, err := scanJSON([]byte(`{"a":{"b":[1,[2]]},"a":0}`))
	if err != nil || info.depth != 4 || !info.dupKey {
		t.Errorf("info = %+v, %v; want depth 4 and a repeated key", info, err)
	}
	deep := strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)
	if info, err := scanJSON([]byte(deep)); err != nil || info.depth != 100_000 {
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

func TestSameID(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		same bool
	}{
		{`1`, `1`, true}, {`100`, `1e2`, true}, {`"a"`, `"a"`, true}, {`"\u0061"`, `"a"`, true},
		{`1`, `"1"`, false}, {`"a"`, `"b"`, false}, {`1`, `2`, false}, {`null`, `0`, false},
	} {
		if got := SameID([]byte(tt.a), []byte(tt.b)); got != tt.same {
			t.Errorf("SameID(%s, %s) = %v", tt.a, tt.b, got)
		}
	}
}

// FuzzJudge checks that Judge and the scanner never panic, and that what the scanner accepts
// encoding/json accepts too.
func FuzzJudge(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `[{"a":[1,2]}]`, `{"a":"\ud800"}`, `{`, "\xff", `""`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c := Judge(b)
		if c.Strict && !json.Valid(b) {
			t.Errorf("strict but not JSON: %q", b)
		}
		if info, err := scanJSON(b); err == nil && info.depth < 10000 && !json.Valid(b) {
			t.Errorf("scanner accepts what encoding/json rejects: %q", b)
		}
		_, _ = ScanSpans(b, 3)
		_ = members(b)
	})
}
