package spec_test

import (
	"context"
	"fmt"

	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// A SPEC — here the URL of an in-process reference server — becomes a dialer for a session.
func Example() {
	ctx := context.Background()
	srv := mcptest.NewServer(nil) // like httptest: Streamable HTTP, SSE and WebSocket on 127.0.0.1
	defer srv.Close()

	d, info, err := spec.Parse(srv.URL, nil) // or "python -m my_server", "ws://…", "tcp://…"
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := session.Open(ctx, d, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	res, err := s.CallTool(ctx, "echo", map[string]any{"text": "hi"}, nil)
	if err != nil {
		fmt.Println(session.CategoryOf(err), err)
		return
	}
	fmt.Println(info.Transport, res.IsError, string(res.Content[0]))
	// Output: auto false {"type":"text","text":"hi"}
}
