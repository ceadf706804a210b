package mcptest

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/coder/websocket"
)

// WebSocketSubprotocol is the subprotocol the WebSocket endpoint offers.
const WebSocketSubprotocol = "mcp"

// wsConn adapts a WebSocket to the connection loop: one JSON-RPC message per text frame.
type wsConn struct {
	ctx context.Context
	c   *websocket.Conn
	// binaryOK serves binary frames as if they were text (Options.SloppyHTTP).
	binaryOK bool
}

func (w *wsConn) readFrame() ([]byte, error) {
	typ, data, err := w.c.Read(w.ctx)
	if err == nil && typ == websocket.MessageBinary && !w.binaryOK {
		// The subprotocol carries JSON-RPC as text: refuse a binary frame as RFC 6455 says.
		_ = w.c.Close(websocket.StatusUnsupportedData, "binary frames are not supported: send JSON-RPC messages as text frames")
		return nil, io.EOF
	}
	return data, err
}

func (w *wsConn) writeFrame(data []byte) error {
	return w.c.Write(w.ctx, websocket.MessageText, data)
}

// handleWebSocket serves PathWebSocket.
func (s *Server) handleWebSocket(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols:       []string{WebSocketSubprotocol},
		InsecureSkipVerify: true, // the server's own loopback Origin check already ran
	})
	if err != nil {
		return // Accept wrote the error response
	}
	c.SetReadLimit(MaxLineSize)
	ctx := r.Context()
	wc := &wsConn{ctx: ctx, c: c, binaryOK: s.Backend.opts.SloppyHTTP}
	err = s.Backend.serveFrames(ctx, wc, wc, func(abrupt bool) {
		if abrupt || ctx.Err() != nil {
			_ = c.CloseNow()
			return
		}
		_ = c.Close(websocket.StatusNormalClosure, "")
	}, readerWait)
	if err != nil && !errors.Is(err, ErrCrashed) && !errors.Is(err, context.Canceled) {
		s.Backend.log.Debug("websocket ended", "err", err)
	}
}
