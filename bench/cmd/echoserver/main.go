// Command echoserver is the minimal fast stdio MCP server of the load benchmarks: it answers
// every tools/call with a pre-encoded result, the request's id patched in (see
// bench.ServeEcho). It serves stdin/stdout until stdin ends.
//
//	go build -o /tmp/echoserver ./bench/cmd/echoserver
package main

import (
	"fmt"
	"os"

	"github.com/mcpspec/mcpspec/bench"
)

func main() {
	if err := bench.ServeEcho(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "echoserver:", err)
		os.Exit(1)
	}
}
