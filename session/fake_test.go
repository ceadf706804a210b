package session

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/pipe"
)

// msg is one frame the fake server received, decoded loosely.
type msg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
	raw    []byte
}

// fake is a scriptable MCP server on the server end of a pipe.
type fake struct {
	t   testing.TB
	end *pipe.ServerEnd
	// handle answers one received frame; nil falls back to legacy defaults.
	handle func(f *fake, m msg)
	// era is "legacy" (discover → -32601) or "stateless" (discover → result) for defaults.
	stateless bool

	mu  sync.Mutex // guards got
	got []msg

	cancel context.CancelFunc
	done   chan struct{}
}

// connDialer hands out one prepared connection.
type connDialer struct{ c transport.Conn }

func (d connDialer) Dial(context.Context) (transport.Conn, error) { return d.c, nil }

// newFake starts a fake server; handle may be nil for a plain legacy server.
func newFake(t testing.TB, handle func(f *fake, m msg)) (*fake, transport.Dialer) {
	t.Helper()
	c, end := pipe.New()
	ctx, cancel := context.WithCancel(context.Background())
	f := &fake{t: t, end: end, handle: handle, cancel: cancel, done: make(chan struct{})}
	go f.loop(ctx)
	t.Cleanup(f.stop)
	return f, connDialer{c}
}

func (f *fake) stop() {
	f.cancel()
	<-f.done
}

func (f *fake) loop(ctx context.Context) {
	defer close(f.done)
	for {
		b, err := f.end.Recv(ctx)
		if err != nil {
			return
		}
		var m msg
		if err := json.Unmarshal(b, &m); err != nil {
			m = msg{}
		}
		m.raw = b
		f.mu.Lock()
		f.got = append(f.got, m)
		f.mu.Unlock()
		if f.handle != nil {
			f.handle(f, m)
		} else {
			f.defaults(m)
		}
	}
}

// defaults answers the handshake like a legacy (or stateless) server and echoes tools/call.
func (f *fake) defaults(m msg) {
	switch m.Method {
	case "server/discover":
		if f.stateless {
			f.result(m, `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"instructions":"hi","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fake","version":"1"}}}`)
			return
		}
		f.errorReply(m, -32601, "method not found")
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(m.Params, &p)
		f.result(m, fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"fake","version":"1"},"instructions":"be nice"}`, p.ProtocolVersion))
	case "ping":
		f.result(m, `{}`)
	case "tools/call":
		var p struct {
			Arguments json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(m.Params, &p)
		f.result(m, `{"content":[{"type":"text","text":"ok"}],"structuredContent":`+string(p.Arguments)+`}`)
	}
}

func (f *fake) send(s string) {
	if err := f.end.Send(context.Background(), []byte(s)); err != nil {
		f.t.Logf("fake send: %v", err)
	}
}

func (f *fake) result(m msg, result string) {
	f.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`)
}

func (f *fake) errorReply(m msg, code int, message string) {
	f.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, m.ID, code, message))
}

// received returns the frames received so far with method (all when "").
func (f *fake) received(method string) []msg {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []msg
	for _, m := range f.got {
		if method == "" || m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// open opens a session on d, failing the test on error, and closes it at cleanup.
func open(t testing.TB, d transport.Dialer, o *Options) *Session {
	t.Helper()
	s, err := Open(context.Background(), d, o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
