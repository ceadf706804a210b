package ws_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/coder/websocket"

	"github.com/mcpspec/mcpspec/session/transport/ws"
)

func ExampleDialer() {
	// An echo server speaking the "mcp" subprotocol.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"mcp"}})
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			typ, b, err := c.Read(r.Context())
			if err != nil || c.Write(r.Context(), typ, b) != nil {
				return
			}
		}
	}))
	defer srv.Close()

	conn, err := ws.Dialer{URL: "ws" + strings.TrimPrefix(srv.URL, "http")}.Dial(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	conn.Send(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	f, _ := conn.Recv()
	fmt.Println(string(f.Data), conn.(*ws.Conn).Subprotocol())
	// Output:
	// {"jsonrpc":"2.0","id":1,"method":"ping"} mcp
}
