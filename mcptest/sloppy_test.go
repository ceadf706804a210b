package mcptest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func TestDecodeFrameCodes(t *testing.T) {
	for _, c := range []struct {
		frame string
		code  int
	}{
		{`{"jsonrpc":"2.0","id":1,"method":`, CodeParseError},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xff\"}}", CodeParseError},
		{`{"jsonrpc":"2.0","id":1,"method":42}`, CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":{},"method":"ping"}`, CodeInvalidRequest},
		{`[]`, CodeInvalidRequest},
	} {
		_, kind, bad := decodeFrame([]byte(c.frame))
		if kind != kindInvalid || bad == nil || bad.Error.Code != c.code {
			t.Errorf("decodeFrame(%q): kind %v, %+v; want error %d", c.frame, kind, bad, c.code)
		}
	}
}

// wsRoundTrip sends one binary frame holding a ping and returns the close status (-1 when the
// server answered) and the answer.
func wsRoundTrip(t *testing.T, opts *Options) (websocket.StatusCode, []byte) {
	t.Helper()
	srv := NewServer(opts)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, srv.WSURL, &websocket.DialOptions{Subprotocols: []string{WebSocketSubprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if err := c.Write(ctx, websocket.MessageBinary, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)); err != nil {
		t.Fatal(err)
	}
	_, data, err := c.Read(ctx)
	return websocket.CloseStatus(err), data
}

func TestWebSocketBinaryFrames(t *testing.T) {
	if status, data := wsRoundTrip(t, nil); status != websocket.StatusUnsupportedData {
		t.Errorf("a binary frame got close status %d and %q, want close 1003", status, data)
	}
	if status, data := wsRoundTrip(t, &Options{SloppyHTTP: true}); status != -1 || !strings.Contains(string(data), `"result"`) {
		t.Errorf("with SloppyHTTP a binary frame got close status %d and %q, want it served", status, data)
	}
}

func post(t *testing.T, url, body string, h http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h.Clone()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestSloppyHTTP(t *testing.T) {
	for _, sloppy := range []bool{false, true} {
		srv := NewServer(&Options{SloppyHTTP: sloppy, SloppyJSONRPC: sloppy})
		init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
		code, _ := post(t, srv.URL, init, http.Header{"Origin": {"http://evil.example"}})
		if (code == http.StatusForbidden) == sloppy {
			t.Errorf("sloppy %v: a foreign Origin got %d", sloppy, code)
		}
		_, _ = post(t, srv.URL, init, http.Header{})
		code, _ = post(t, srv.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, http.Header{})
		if (code == http.StatusOK) != sloppy {
			t.Errorf("sloppy %v: tools/list without a session id got %d", sloppy, code)
		}
		code, body := post(t, srv.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, http.Header{"Mcp-Session-Id": {srv.anySession()}})
		if sloppy != (code == http.StatusOK && bytes.Contains([]byte(body), []byte(`"id":null`))) {
			t.Errorf("sloppy %v: a notification got %d %q", sloppy, code, body)
		}
		srv.Close()
	}
}
