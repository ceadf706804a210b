package headofline_test

import (
	"context"
	"fmt"

	"github.com/mcpspec/mcpspec/detect/headofline"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

// A server that handles one call at a time makes the fast echo wait for the slow call.
func Example() {
	srv := mcptest.NewServer(&mcptest.Options{Serialize: true})
	defer srv.Close()
	dial, info, _ := serverconn.SpecDial(srv.URL, nil)
	op := serverconn.New(serverconn.Options{Info: info, Dial: dial})

	r, err := headofline.Run(context.Background(), op, &headofline.Options{
		SlowTool: "slow", SlowArgs: map[string]any{"milliseconds": 200},
		FastTool: "echo", FastArgs: map[string]any{"text": "x"},
		Rounds: 3, SlowConcurrency: 1,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Verdict)
	// Output: serializes
}
