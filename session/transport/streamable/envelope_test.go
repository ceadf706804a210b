package streamable

import (
	"bytes"
	"encoding/json"
	"mime"
	"testing"
)

// peekJSON is the reference peek: encoding/json into the fields the transport reads.
func peekJSON(frame []byte) (id json.RawMessage, method, name, uri string) {
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"params"`
	}
	b := bytes.TrimLeft(frame, " \t\r\n")
	if len(b) == 0 || b[0] != '{' {
		return nil, "", "", ""
	}
	_ = json.Unmarshal(b, &env)
	if bytes.Equal(env.ID, []byte("null")) {
		env.ID = nil
	}
	return env.ID, env.Method, env.Params.Name, env.Params.URI
}

var peekSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}`,
	`{"jsonrpc":"2.0","id":"r","method":"resources/read","params":{"uri":"file:///a b.txt"}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":3,"result":{}}`,
	` {"ID":7,"METHOD":"prompts/get","Params":{"NAME":"p"}} `,
	`{"id":1,"method":"a","method":5,"method":null}`,
	`{"id":1,"id":null,"method":"tools/call"}`,
	`{"params":{"name":"a"},"params":{"uri":"b"},"params":[1],"params":null,"method":"x"}`,
	`{"method":"tools\/call","params":{"n\u0061me":"\u00e9\ud800x","uri":7}}`,
	"{\"method\":\"bad\xff\xfeutf8\",\"params\":{\"name\":\"\xc3\"}}",
	`{"paramſ":{"name":"longs"},"method":"K"}`,
	`{"id":1,"method":"tools/call"} {}`,
	`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
	`{"id":1,"method":"x","params":{"name":tru}}`,
	`"just a string"`,
	``,
}

// FuzzPeek checks the transport's envelope scanner against encoding/json: the same id, method,
// params.name and params.uri for every input, valid or not.
func FuzzPeek(f *testing.F) {
	for _, s := range peekSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		env := peek(frame)
		id, method, name, uri := peekJSON(frame)
		if !bytes.Equal(env.ID, id) || (env.ID == nil) != (id == nil) {
			t.Fatalf("peek(%q).ID = %q, encoding/json %q", frame, env.ID, id)
		}
		if env.Method != method {
			t.Fatalf("peek(%q).Method = %q, encoding/json %q", frame, env.Method, method)
		}
		if h := env.methodHeader; h != nil && h[0] != method {
			t.Fatalf("peek(%q): Mcp-Method header %q for method %q", frame, h[0], method)
		}
		for _, m := range []struct {
			what string
			tok  []byte
			want string
		}{{"name", env.name, name}, {"uri", env.uri, uri}} {
			got := ""
			if m.tok != nil {
				got = decodeString(m.tok)
			}
			if got != m.want {
				t.Fatalf("peek(%q).%s = %q, encoding/json %q", frame, m.what, got, m.want)
			}
		}
	})
}

func TestPeekAllocatesNothingForACall(t *testing.T) {
	frame := []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`)
	if n := testing.AllocsPerRun(100, func() { _ = peek(frame) }); n != 0 {
		t.Errorf("peek allocates %v times per tools/call frame", n)
	}
}

// FuzzIsEventStream checks the Content-Type fast path against mime.ParseMediaType.
func FuzzIsEventStream(f *testing.F) {
	for _, s := range []string{"application/json", "text/event-stream", " TEXT/Event-Stream ",
		"text/event-stream; charset=utf-8", "text/event-stream; a=1; a=2", "text/event-stream;",
		"text/event-streamx", "", "text/\u212aevent-stream", "\u00a0text/event-stream", "text /event-stream"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ct string) {
		mediaType, _, _ := mime.ParseMediaType(ct)
		if got, want := isEventStream(ct), mediaType == "text/event-stream"; got != want {
			t.Fatalf("isEventStream(%q) = %v, mime.ParseMediaType says %v", ct, got, want)
		}
	})
}
