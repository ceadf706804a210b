package deadlock_test

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpspec/mcpspec/detect/deadlock"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

// A server that deadlocks once two calls overlap passes every call made alone; the probe
// releases 8 together and says so.
func Example() {
	srv := mcptest.NewServer(&mcptest.Options{HangWhenConcurrent: true})
	defer srv.Close()
	dial, info, _ := serverconn.SpecDial(srv.URL, nil)
	op := serverconn.New(serverconn.Options{Info: info, Dial: dial})

	r, err := deadlock.Run(context.Background(), op, &deadlock.Options{
		Tool: "slow", Args: map[string]any{"milliseconds": 50},
		Concurrency: 8, HangAfter: 300 * time.Millisecond, Grace: 300 * time.Millisecond,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Verdict, r.DeadlockCount)
	// Output: deadlock 8
}
