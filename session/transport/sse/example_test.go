package sse_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/mcpspec/mcpspec/session/transport/sse"
)

func ExampleDialer() {
	// A legacy server: the GET stream announces where to POST, then carries the answers.
	answers := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusAccepted)
			answers <- `{"jsonrpc":"2.0","id":1,"result":{}}`
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: endpoint\ndata: /messages?sessionId=42\n\n")
		w.(http.Flusher).Flush()
		select {
		case a := <-answers:
			io.WriteString(w, "event: message\ndata: "+a+"\n\n")
			w.(http.Flusher).Flush()
		case <-r.Context().Done():
		}
		<-r.Context().Done()
	}))
	defer srv.Close()

	conn, err := sse.Dialer{URL: srv.URL + "/sse"}.Dial(context.Background())
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
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{}}
}
