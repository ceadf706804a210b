package streamable_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/mcpspec/mcpspec/session/transport/streamable"
)

func ExampleDialer() {
	// A minimal server answering every request with an empty result.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Mcp-Session-Id", "s1")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	defer srv.Close()

	d := streamable.Dialer{URL: srv.URL, Header: http.Header{"Authorization": {"Bearer token"}}}
	conn, err := d.Dial(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	if err := conn.Send(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)); err != nil {
		fmt.Println(err)
		return
	}
	f, _ := conn.Recv()
	fmt.Println(string(f.Data))
	fmt.Println("session:", conn.(*streamable.Conn).SessionID())
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{}}
	// session: s1
}
