//go:build unix

package stdio_test

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpspec/mcpspec/session/transport/stdio"
)

// ExampleCommand runs cat as a stand-in server: every frame sent comes back.
func ExampleCommand() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := stdio.Command{Path: "cat", Grace: time.Second}.Dial(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := conn.Send(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)); err != nil {
		fmt.Println(err)
	}
	f, err := conn.Recv()
	fmt.Printf("%s %v\n", f.Data, err)
	if err := conn.Close(); err != nil {
		fmt.Println(err)
	}
	fmt.Println("stopped by:", conn.(*stdio.Conn).ShutdownStage())
	// Output:
	// {"jsonrpc":"2.0","id":1,"method":"ping"} <nil>
	// stopped by: stdin
}
