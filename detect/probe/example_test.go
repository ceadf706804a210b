package probe_test

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpspec/mcpspec/detect/probe"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

// Probe the reference server over TCP: two rows, in table order, in both protocol eras it
// speaks (the stateless era has no ping).
func Example() {
	srv := mcptest.NewTCPServer(nil)
	defer srv.Close()
	dial, info, err := serverconn.SpecDial(srv.URL(), nil)
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := probe.Run(ctx, &probe.Options{
		Server: serverconn.Options{Info: info, Dial: dial, Session: session.Options{ConnectTimeout: 10 * time.Second}},
		Checks: []string{"ping", "jsonrpc.method-not-found"},
	})
	if err != nil {
		panic(err)
	}
	for _, r := range rep.Results {
		fmt.Println(r.ID, r.Era, r.Status)
	}
	fmt.Println("failed:", rep.Failed())
	// Output:
	// jsonrpc.method-not-found legacy pass
	// ping legacy pass
	// jsonrpc.method-not-found stateless pass
	// ping stateless n/a
	// failed: false
}
