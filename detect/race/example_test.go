package race_test

import (
	"context"
	"fmt"

	"github.com/mcpspec/mcpspec/detect/race"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

// A tool that returns the current time varies even one call at a time: non-deterministic by
// design, not a race.
func Example() {
	srv := mcptest.NewServer(&mcptest.Options{TimeTool: true})
	defer srv.Close()
	dial, info, _ := serverconn.SpecDial(srv.URL, nil)
	op := serverconn.New(serverconn.Options{Info: info, Dial: dial})

	r, err := race.Run(context.Background(), op, &race.Options{Tool: "time", Concurrency: 8, Rounds: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Verdict, r.Found())
	// Output: non-deterministic by design false
}
