package mutate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpspec/mcpspec/internal/jsonscan"
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
		if info, err := jsonscan.Check(b); err == nil && info.Depth < 10000 && !json.Valid(b) {
			t.Errorf("scanner accepts what encoding/json rejects: %q", b)
		}
		_, _ = jsonscan.ScanSpans(b, 3)
		_ = jsonscan.Members(b)
	})
}
