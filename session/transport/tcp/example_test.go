package tcp_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/mcpspec/mcpspec/session/transport/linestream"
	"github.com/mcpspec/mcpspec/session/transport/tcp"
)

// ExampleDialer talks to a one-shot server on 127.0.0.1 that answers a ping.
func ExampleDialer() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ln.Close()
	served := make(chan struct{})
	go func() {
		defer close(served)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		w := linestream.NewWriter(c)
		defer w.Close()
		if _, err := linestream.NewReader(c, 0).ReadFrame(); err == nil {
			w.WriteFrame(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
			w.Flush(context.Background())
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := tcp.Dialer{Addr: ln.Addr().String()}.Dial(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	conn.Send(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	f, err := conn.Recv()
	fmt.Printf("%s %v\n", f.Data, err)
	<-served
	// Output: {"jsonrpc":"2.0","id":1,"result":{}} <nil>
}
