package mcptest_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpspec/mcpspec/mcptest"
)

// initializeWith performs the legacy handshake declaring the given client capabilities.
func (c *lineClient) initializeWith(caps map[string]any) {
	c.t.Helper()
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	c.result("initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": caps,
		"clientInfo": map[string]any{"name": "test", "version": "0"},
	}, &res)
	c.send(nil, "notifications/initialized", nil)
}

func TestAskOverTCP(t *testing.T) {
	all := map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}, "roots": map[string]any{}}
	tests := []struct {
		name       string
		caps       map[string]any
		tool       string
		args       map[string]any
		wantMethod string // the request the server sends; "" for none
		reply      string // the client's answer: a result object, or an error when it starts with "!"
		wantText   string
		wantError  bool
	}{
		{"elicitation", all, "ask", map[string]any{"kind": "elicitation", "message": "name?"}, "elicitation/create",
			`{"action":"accept","content":{"answer":"Ada"}}`, `"answer":"Ada"`, false},
		{"elicitation is the default", all, "ask", map[string]any{}, "elicitation/create",
			`{"action":"decline"}`, `"action":"decline"`, false},
		{"sampling", all, "ask", map[string]any{"kind": "sampling", "message": "2+2?"}, "sampling/createMessage",
			`{"role":"assistant","content":{"type":"text","text":"4"},"model":"m"}`, `"text":"4"`, false},
		{"ask roots", all, "ask", map[string]any{"kind": "roots"}, "roots/list",
			`{"roots":[{"uri":"file:///w"}]}`, `file:///w`, false},
		{"roots tool", all, "roots", map[string]any{}, "roots/list",
			`{"roots":[{"uri":"file:///a","name":"a"}]}`, `"uri":"file:///a"`, false},
		{"client error", all, "ask", map[string]any{"kind": "sampling"}, "sampling/createMessage",
			`!{"code":-32601,"message":"no sampling here"}`, "error -32601: no sampling here", true},
		{"undeclared elicitation", map[string]any{}, "ask", map[string]any{}, "", "",
			"did not declare the elicitation capability", true},
		{"undeclared roots", map[string]any{"sampling": map[string]any{}}, "roots", map[string]any{}, "", "",
			"did not declare the roots capability", true},
		{"bad kind", all, "ask", map[string]any{"kind": "telepathy"}, "", "", "kind must be", true},
	}
	s := mcptest.NewTCPServer(nil)
	t.Cleanup(s.Close)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dialTCP(t, s)
			defer c.close()
			c.initializeWith(tt.caps)
			id := c.request("tools/call", toolCall(tt.tool, tt.args))
			if tt.wantMethod != "" {
				m := c.recv()
				if m.Method != tt.wantMethod || len(m.ID) == 0 {
					t.Fatalf("server sent %s, want a %s request", m.raw, tt.wantMethod)
				}
				answer := `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + tt.reply + `}`
				if e, ok := strings.CutPrefix(tt.reply, "!"); ok {
					answer = `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":` + e + `}`
				}
				c.sendRaw(answer)
			}
			m := c.recvResponse()
			var res toolResult
			if string(m.ID) != jsonInt(id) || m.Error != nil || json.Unmarshal(m.Result, &res) != nil {
				t.Fatalf("tools/call answer %s", m.raw)
			}
			if res.IsError != tt.wantError || !strings.Contains(res.text(), tt.wantText) {
				t.Errorf("result %s, want isError=%v and text containing %q", m.Result, tt.wantError, tt.wantText)
			}
		})
	}
}

func jsonInt(n int) string { b, _ := json.Marshal(n); return string(b) }

// sseEvent is one event read from a live stream.
type sseEvent struct{ id, data string }

// readEvent reads the next event with data (the priming event is returned too, with empty
// data); ok is false at the end of the stream.
func readEvent(t testing.TB, br *bufio.Reader) (ev sseEvent, ok bool) {
	t.Helper()
	seen := false
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return ev, false
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
			if seen {
				return ev, true
			}
		case strings.HasPrefix(line, "id: "):
			ev.id, seen = line[4:], true
		case strings.HasPrefix(line, "data: "), line == "data:":
			ev.data, seen = strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "), true
		default:
			seen = true
		}
	}
}

// openSSE POSTs or GETs and returns the response, which must be an event stream.
func openSSE(t testing.TB, hc *http.Client, method, url string, header map[string]string, body any) *http.Response {
	t.Helper()
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%s: %d %v, want an event stream", method, resp.StatusCode, resp.Header)
	}
	return resp
}

func TestAskOverStreamableHTTP(t *testing.T) {
	s := mcptest.NewServer(nil)
	t.Cleanup(s.Close)
	hc := httpClient(t)
	init := map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"elicitation": map[string]any{}},
		"clientInfo": map[string]any{"name": "t", "version": "0"}}
	sid := do(t, hc, "POST", s.URL, nil, rpc(1, "initialize", init)).header.Get(mcptest.HeaderSessionID)
	hdr := map[string]string{mcptest.HeaderSessionID: sid}

	// The ask call is answered as an event stream even in JSON mode: the elicitation request
	// travels on it, the client's answer comes back as its own POST (202).
	resp := openSSE(t, hc, "POST", s.URL, hdr, rpc(2, "tools/call", toolCall("ask", map[string]any{"message": "ok?"})))
	br := bufio.NewReader(resp.Body)
	if ev, ok := readEvent(t, br); !ok || ev.data != "" || ev.id == "" {
		t.Fatalf("first event %+v, want the priming event", ev)
	}
	ev, _ := readEvent(t, br)
	var m msg
	if json.Unmarshal([]byte(ev.data), &m) != nil || m.Method != "elicitation/create" || len(m.ID) == 0 {
		t.Fatalf("event %+v, want an elicitation/create request", ev)
	}
	answer := map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(m.ID), "result": map[string]any{"action": "accept", "content": map[string]any{"answer": "sure"}}}
	if r := do(t, hc, "POST", s.URL, hdr, answer); r.status != http.StatusAccepted {
		t.Fatalf("client answer: %d %s", r.status, r.body)
	}
	ev, _ = readEvent(t, br)
	if !strings.Contains(ev.data, `"id":2`) || !strings.Contains(ev.data, `\"answer\":\"sure\"`) || strings.Contains(ev.data, `"isError":true`) {
		t.Errorf("tools/call answer %+v", ev)
	}

	// roots needs the roots capability, which this client did not declare.
	r := do(t, hc, "POST", s.URL, hdr, rpc(3, "tools/call", toolCall("roots", nil)))
	if !strings.Contains(string(r.body), `"isError":true`) || !strings.Contains(string(r.body), "did not declare the roots capability") {
		t.Errorf("roots without the capability: %s", r.body)
	}

	// The stateless era has no server-to-client requests: the tools are not there.
	st := do(t, hc, "POST", s.URL, map[string]string{mcptest.HeaderMethod: "tools/call", mcptest.HeaderName: "ask"},
		rpc(4, "tools/call", statelessMeta(toolCall("ask", map[string]any{}), mcptest.StatelessVersion)))
	if st.msg(t).Error == nil {
		t.Errorf("stateless ask: %s, want an error for an unknown tool", st.body)
	}
}
