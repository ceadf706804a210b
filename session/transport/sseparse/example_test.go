package sseparse_test

import (
	"fmt"
	"strings"

	"github.com/mcpspec/mcpspec/session/transport/sseparse"
)

func ExampleReader() {
	stream := "id: 1\nretry: 500\ndata:\n\n" + // a priming event: recorded, not returned
		": keepalive\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"id\":1,\"result\":{}}\n\n"
	r := sseparse.NewReader(strings.NewReader(stream), 0)
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		fmt.Printf("%s: %s\n", ev.Type, ev.Data)
	}
	retry, _ := r.Retry()
	fmt.Println("last id:", r.LastEventID(), "retry:", retry)
	// Output:
	// message: {"jsonrpc":"2.0",
	// "id":1,"result":{}}
	// last id: 1 retry: 500ms
}
