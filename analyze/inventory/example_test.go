package inventory_test

import (
	"context"
	"fmt"

	"github.com/mcpspec/mcpspec/analyze/inventory"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

func Example() {
	ctx := context.Background()
	srv := mcptest.NewServer(nil)
	defer srv.Close()
	d, _, err := spec.Parse(srv.URL, nil)
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
	inv, err := inventory.Collect(ctx, s)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(inv.ServerInfo.Name, len(inv.Tools), "tools, first:", inv.Tools[0].Name)
	// Output: mcptest 6 tools, first: echo
}
