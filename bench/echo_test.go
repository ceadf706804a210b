package bench

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

func TestServeEcho(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"call", `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`,
			`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"hello"}]}}`},
		{"string id", `{"jsonrpc":"2.0","id":"a\"b","method":"tools/call"}`,
			`{"jsonrpc":"2.0","id":"a\"b","result":{"content":[{"type":"text","text":"hello"}]}}`},
		{"id after method, spaced", `{"method": "tools/call", "jsonrpc":"2.0", "id": 7}`,
			`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hello"}]}}`},
		{"initialize", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}`,
			`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"bench-echo","version":"1"}}}`},
		{"initialize without version", `{"jsonrpc":"2.0","id":1,"method":"initialize"}`,
			`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bench-echo","version":"1"}}}`},
		{"list", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
			`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo","description":"Returns hello.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}]}}`},
		{"ping", `{"jsonrpc":"2.0","id":3,"method":"ping"}`, `{"jsonrpc":"2.0","id":3,"result":{}}`},
		{"unknown", `{"jsonrpc":"2.0","id":4,"method":"server/discover"}`,
			`{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"method not found"}}`},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, ``},
		{"not json", `hello`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`},
		{"blank", ``, ``},
		{"bad number id", `{"id":+1,"method":"ping"}`, ``},
		{"leading zero id", `{"id":01,"method":"ping"}`, ``},
		{"exponent id", `{"id":-1.5e+3,"method":"ping"}`, `{"jsonrpc":"2.0","id":-1.5e+3,"result":{}}`},
		{"bad escape id", `{"id":"\q","method":"ping"}`, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := ServeEcho(strings.NewReader(tt.in+"\n"), &out); err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if want != "" {
				want += "\n"
				if !json.Valid(out.Bytes()) {
					t.Errorf("answer is not JSON: %s", out.Bytes())
				}
			}
			if out.String() != want {
				t.Errorf("answer\n%s\nwant\n%s", out.String(), want)
			}
		})
	}
}

// TestServeEchoBurst answers a burst in order, a line without a newline at EOF and an
// over-long line included.
func TestServeEchoBurst(t *testing.T) {
	var in strings.Builder
	for i := range 1000 {
		in.WriteString(`{"jsonrpc":"2.0","id":` + itoa(i) + `,"method":"tools/call"}` + "\n")
	}
	in.WriteString(strings.Repeat("x", 200<<10) + "\n")
	in.WriteString(`{"jsonrpc":"2.0","id":1000,"method":"ping"}`)
	var out bytes.Buffer
	if err := ServeEcho(strings.NewReader(in.String()), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 1002 {
		t.Fatalf("%d answers, want 1002", len(lines))
	}
	for i, l := range lines[:1000] {
		if id, ok := responseID([]byte(l)); !ok || id != int64(i) {
			t.Fatalf("answer %d: %s", i, l)
		}
	}
	if !strings.Contains(lines[1000], "-32700") || !strings.Contains(lines[1001], `"id":1000`) {
		t.Errorf("last answers: %s / %s", lines[1000], lines[1001])
	}
}

// FuzzServeEcho: any input gives answers that are JSON, one per line, never a panic.
func FuzzServeEcho(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call"}` + "\n"))
	f.Add([]byte(`{"id":"\\","method":"initialize","params":{"protocolVersion":"x\\"}}`))
	f.Add([]byte("{\"id\": -1e5}\n{\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		if err := ServeEcho(bytes.NewReader(in), &out); err != nil {
			t.Fatal(err)
		}
		for l := range strings.SplitSeq(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if l != "" && !json.Valid([]byte(l)) {
				t.Fatalf("answer not JSON: %q (input %q)", l, in)
			}
		}
	})
}

func itoa(i int) string { return strconv.Itoa(i) }
