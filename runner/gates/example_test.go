package gates_test

import (
	"context"
	"fmt"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/runner/gates"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

func Example() {
	ctx := context.Background()
	srv := mcptest.NewServer(nil)
	defer srv.Close()
	d, _, _ := spec.Parse(srv.URL, nil)
	s, err := session.Open(ctx, d, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	c, err := collection.Parse("ci.yaml", []byte("server: testserver\ntokens: {budget: 100}\n"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	t := gates.Tokens(ctx, s, "default", c.Tokens)
	fmt.Println(t.Status, t.Failures[0].Message)
	// Output: failed the tools' core definitions take 410 o200k_base tokens, over the budget of 100
}
