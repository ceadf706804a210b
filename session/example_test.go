package session_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport/pipe"
)

// A fake server on the other end of an in-memory pipe answers initialize and one tools/call;
// the session detects the legacy era (the server does not know server/discover).
func Example() {
	ctx := context.Background()
	d := pipe.NewDialer()
	defer d.Close()
	go func() {
		srv, err := d.Accept(ctx)
		if err != nil {
			return
		}
		for {
			frame, err := srv.Recv(ctx)
			if err != nil {
				return
			}
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			_ = json.Unmarshal(frame, &req)
			var result string
			switch req.Method {
			case "initialize":
				result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"demo","version":"1"}}`
			case "tools/call":
				result = `{"content":[{"type":"text","text":"hello"}]}`
			case "server/discover":
				_ = srv.Send(ctx, []byte(`{"jsonrpc":"2.0","id":`+string(req.ID)+`,"error":{"code":-32601,"message":"method not found"}}`))
				continue
			default:
				continue // notifications
			}
			_ = srv.Send(ctx, []byte(`{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":`+result+`}`))
		}
	}()

	s, err := session.Open(ctx, d, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	res, err := s.CallTool(ctx, "greet", map[string]any{"name": "ada"}, nil)
	if err != nil {
		fmt.Println(session.CategoryOf(err), err)
		return
	}
	fmt.Println(s.Era(), s.ProtocolVersion(), s.ServerInfo().Name, string(res.Content[0]))
	// Output: legacy 2025-11-25 demo {"type":"text","text":"hello"}
}
