package session

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/pipe"
)

var envelopeSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`,
	`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"nope","data":{"x":[1,2.5e3,null,true,false]}}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":0.5}}`,
	`{"jsonrpc":"2.0","id":"abc","method":"roots/list"}`,
	` { "id" : -0 , "jsonrpc" : "2.0" , "result" : [ ] } `,
	`{"\u0069d":5,"jsonrpc":"2\u002e0","result":"\ud83d\ude00 \ud800"}`,
	`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"both"}}`,
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
	`{"jsonrpc":"2.0","id":7,"result":{"a":}}`,
	`{"jsonrpc":"2.0","id":7,"result":"` + "\xff" + `"}`,
	`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]`,
	`{"id":99999999999999999999,"result":1}`,
	`{"id":1.5,"result":1}`,
	`{"id":1,"id":2,"result":{}}`,
	`{"a":[[[[[[[[]]]]]]]]}`,
	`"just a string"`,
	``,
	`{`,
	`{"jsonrpc":"2.0","id":3,"result":{"s":"tab	inside"}}`,
	`{"x":01}`,
	`{"x":-}`,
	`{"x":1.}`,
	`{"x":1e}`,
	`{"x":"\q"}`,
	`{"x":"\u12"}`,
	`{"x":tru}`,
	`{} {}`,
}

// FuzzDecodeEnvelope checks the envelope scanner against encoding/json: it accepts exactly the
// valid UTF-8 JSON objects, finds the same members, and nothing it is fed panics the reader.
func FuzzDecodeEnvelope(f *testing.F) {
	for _, s := range envelopeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := decodeEnvelope(data)
		trimmed := bytes.TrimLeft(data, " \t\r\n")
		want := json.Valid(data) && utf8.Valid(data) && len(trimmed) > 0 && trimmed[0] == '{'
		if (err == nil) != want {
			t.Fatalf("decodeEnvelope(%q) err=%v, json.Valid says valid object=%v", data, err, want)
		}
		if err == nil {
			var m map[string]json.RawMessage
			if jerr := json.Unmarshal(data, &m); jerr != nil {
				t.Fatalf("encoding/json rejects %q: %v", data, jerr)
			}
			for name, got := range map[string][]byte{"id": env.id, "jsonrpc": env.jsonrpc, "method": env.method,
				"params": env.params, "result": env.result, "error": env.err} {
				if w, ok := m[name]; ok != (got != nil) || (ok && !bytes.Equal(w, got)) {
					t.Fatalf("%q: member %s = %q, encoding/json says %q (present %v)", data, name, got, w, ok)
				}
			}
			if n, ok := parseInt(env.id); ok {
				var want int64
				if json.Unmarshal(env.id, &want) != nil || want != n {
					t.Fatalf("parseInt(%s) = %d, encoding/json %d", env.id, n, want)
				}
			}
			if env.method != nil {
				s, ok := unquote(env.method)
				var w string
				if jerr := json.Unmarshal(env.method, &w); (jerr == nil) != ok || (ok && s != w) {
					t.Fatalf("unquote(%s) = %q,%v; encoding/json %q,%v", env.method, s, ok, w, jerr)
				}
			}
		}
		_ = salvageIDs(data)
		// The whole routing path must survive the frame, with and without a framing error.
		conn, end := pipe.New()
		_ = end.Close()
		s := &Session{conn: conn, sh: shared{pending: map[int64]*call{}}, opts: (&Options{}).withDefaults()}
		s.state.Store(&negotiated{})
		for _, id := range []int64{1, 2, 5, 7} {
			c := getCall(id)
			s.sh.pending[id] = c
		}
		s.handleFrame(transport.Frame{Data: data, At: time.Now()})
		s.handleFrame(transport.Frame{Data: data, At: time.Now(), Err: &transport.FrameError{Reason: "truncated"}})
		s.replies.Wait()
	})
}

func TestDecodeEnvelopeSeeds(t *testing.T) {
	env, err := decodeEnvelope([]byte(envelopeSeeds[5]))
	if err != nil {
		t.Fatal(err)
	}
	if string(env.id) != "5" || !env.jsonrpcOK() || env.kind() != kindResponse {
		t.Errorf("escaped keys: %+v", env)
	}
	if _, err := decodeEnvelope([]byte(envelopeSeeds[9])); err == nil {
		t.Error("invalid UTF-8 accepted")
	}
	if got := salvageIDs([]byte(`{"jsonrpc":"2.0", "id" :  42,"result":{"id":7,"x":"\"id\":9`)); !cmp.Equal(got, []int64{42, 7}) {
		t.Errorf("salvageIDs = %v", got)
	}
}

func TestAppendValueMatchesEncodingJSON(t *testing.T) {
	values := []any{
		nil, "plain", "quote\" back\\ nl\n tab\t ctrl\x01 uni é 😀 bad\xff line\u2028", true, false,
		0, -12, int64(math.MaxInt64), uint64(math.MaxUint64), 1.5, 1e21, 1e-7, 123456789.0, -0.000001, 0.0,
		map[string]any{"b": 1.0, "a": []any{"x", nil, map[string]any{}}, "c": map[string]string{"z": "y"}},
		[]string{"a", "b"}, []any{}, map[string]any{},
		json.RawMessage(`{"raw":true}`),
		struct {
			A int `json:"a"`
		}{3},
	}
	for _, v := range values {
		got, err := appendValue(nil, v)
		if err != nil {
			t.Fatalf("%#v: %v", v, err)
		}
		want, _ := json.Marshal(v)
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%#v encodes to invalid JSON %s", v, got)
		}
		_ = json.Unmarshal(want, &w)
		if diff := cmp.Diff(w, g); diff != "" {
			t.Errorf("%#v: (-encoding/json +ours)\n%s", v, diff)
		}
	}
	if _, err := appendValue(nil, math.NaN()); err == nil {
		t.Error("NaN encoded")
	}
}

func TestAppendParams(t *testing.T) {
	meta := []byte(`"k":"v"`)
	cases := []struct {
		params   string
		plain    bool
		meta     []byte
		progress int64
		extra    string
		want     string
	}{
		{"", true, nil, 0, "", `{}`},
		{`{"a":1}`, true, meta, 0, "", `{"_meta":{"k":"v"},"a":1}`},
		{`{}`, true, meta, 7, `"x":2`, `{"_meta":{"k":"v","progressToken":7},"x":2}`},
		{`{"a":1,"_meta":{"mine":true}}`, false, meta, 0, "", `{"a":1,"_meta":{"k":"v","mine":true}}`},
		{`{"_meta":{}}`, false, nil, 3, "", `{"_meta":{"progressToken":3}}`},
		{`[1,2]`, false, meta, 0, "", `[1,2]`},
		{` {"a":1} `, true, nil, 0, `"r":"s"`, `{"a":1,"r":"s"}`},
	}
	for _, tc := range cases {
		var params []byte
		if tc.params != "" {
			params = []byte(tc.params)
		}
		var extra []byte
		if tc.extra != "" {
			extra = []byte(tc.extra)
		}
		got := string(appendParams(nil, params, tc.plain, tc.meta, tc.progress, extra))
		if got != tc.want {
			t.Errorf("appendParams(%s) = %s, want %s", tc.params, got, tc.want)
		}
	}
}
