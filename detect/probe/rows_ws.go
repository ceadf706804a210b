package probe

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/coder/websocket"

	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport/spec"
	"github.com/mcpspec/mcpspec/session/transport/ws"
)

// The WebSocket rows. MCP defines no WebSocket binding (SEP-1288 is a draft); these rows check
// the convention the TypeScript and Python SDKs' v1 clients follow: the "mcp" subprotocol and
// one JSON-RPC message per text frame.

func wsRows() []Row {
	const convention = specWebSocket + "§1.9 Subprotocols; MCP has no WebSocket binding (SEP-1288 draft): the SDKs' \"mcp\" subprotocol"
	return []Row{
		{ID: "ws.subprotocol", Title: `the server selects the "mcp" subprotocol`, Once: true,
			Spec: convention, Applies: over(spec.WS), Run: wsSubprotocol},
		{ID: "ws.binary-frame", Title: "a binary frame is refused (close 1003), not served", Once: true,
			Spec:    specWebSocket + "§7.4.1 Defined Status Codes (1003 unsupported data); seed compliance matrix: reject binary frames",
			Applies: over(spec.WS), Run: wsBinary},
	}
}

// wsSubprotocol reads the subprotocol of the main session's connection.
func wsSubprotocol(ctx context.Context, e *Env) Outcome {
	c, err := e.session(ctx)
	if err != nil {
		return Outcome{Fail, err.Error()}
	}
	wc, ok := c.Conn().(*ws.Conn)
	if !ok {
		return Outcome{NotApplicable, "the session is not a WebSocket connection"}
	}
	e.note("handshake offered Sec-WebSocket-Protocol: %s; selected: %q", ws.DefaultSubprotocol, wc.Subprotocol())
	if wc.Subprotocol() != ws.DefaultSubprotocol {
		return Outcome{Warn, fmt.Sprintf("the server selected subprotocol %q; clients offer %q", wc.Subprotocol(), ws.DefaultSubprotocol)}
	}
	return Outcome{Pass, `"mcp" selected`}
}

// wsBinary sends a valid request as a binary frame on a connection of its own.
func wsBinary(ctx context.Context, e *Env) Outcome {
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(dctx, e.endpoint(), &websocket.DialOptions{
		HTTPHeader:   e.p.o.Header.Clone(),
		Subprotocols: []string{ws.DefaultSubprotocol},
	})
	if err != nil {
		return Outcome{Fail, "dial: " + err.Error()}
	}
	defer c.CloseNow()
	init := e.initializeBody()
	req := request(probeID("binary"), "ping", nil)
	if e.Target.Era == session.EraStateless {
		req = request(probeID("binary"), "server/discover", e.params(""))
	} else {
		e.hub.note(dirSent, "text frame: "+excerpt(init))
		if err := c.Write(dctx, websocket.MessageText, init); err != nil {
			return Outcome{Fail, "write: " + err.Error()}
		}
		if _, data, err := c.Read(dctx); err != nil {
			return Outcome{Fail, "no answer to initialize: " + err.Error()}
		} else {
			e.hub.note(dirReceived, "text frame: "+excerpt(data))
		}
		_ = c.Write(dctx, websocket.MessageText, notification("notifications/initialized", nil))
	}
	e.hub.note(dirSent, "binary frame: "+excerpt(req))
	if err := c.Write(dctx, websocket.MessageBinary, req); err != nil {
		return Outcome{Fail, "write: " + err.Error()}
	}
	rctx, rcancel := context.WithTimeout(ctx, e.quiet())
	defer rcancel()
	typ, data, err := c.Read(rctx)
	var out Outcome
	switch {
	case websocket.CloseStatus(err) == websocket.StatusUnsupportedData:
		e.hub.note(dirReceived, "close 1003 (unsupported data)")
		out = Outcome{Pass, "closed with 1003 (unsupported data)"}
	case websocket.CloseStatus(err) != -1:
		e.hub.note(dirReceived, fmt.Sprintf("close %d", websocket.CloseStatus(err)))
		out = Outcome{Warn, fmt.Sprintf("closed with %d; a binary frame is refused with 1003 (unsupported data)", websocket.CloseStatus(err))}
	case errors.Is(err, context.DeadlineExceeded):
		out = Outcome{Warn, "the binary frame was ignored; refuse it with close 1003 (unsupported data) so the client learns why"}
	case err != nil:
		out = Outcome{Warn, "the connection ended without a close frame: " + err.Error()}
	default:
		e.hub.note(dirReceived, fmt.Sprintf("%s frame: %s", typ, excerpt(data)))
		out = Outcome{Warn, "the binary frame was served as if it were text; the subprotocol carries text frames only"}
	}
	return e.afterward(ctx, out)
}
