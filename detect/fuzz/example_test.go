package fuzz_test

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpspec/mcpspec/detect/fuzz"
	"github.com/mcpspec/mcpspec/detect/fuzz/mutate"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

// Fuzz a reference server that answers prompts/get with truncated JSON: the malformed answer
// is found, reproduced and minimised to the smallest frame that still shows it.
func Example() {
	srv := mcptest.NewServer(&mcptest.Options{Era: mcptest.EraLegacy, MalformedMethod: "prompts/get"})
	defer srv.Close()
	dial, info, err := serverconn.SpecDial(srv.URL, nil)
	if err != nil {
		panic(err)
	}
	op := serverconn.New(serverconn.Options{Info: info, Dial: dial})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := fuzz.Run(ctx, op, &fuzz.Options{Iterations: 40, Seed: 1, Families: []mutate.Family{mutate.BadParams}, HangAfter: 2 * time.Second})
	if err != nil {
		panic(err)
	}
	for _, f := range rep.Findings {
		fmt.Printf("%s %s (reproduced %v): %s\n", f.ID, f.Outcome, f.Reproduced, f.Frames[0])
	}
	// Output:
	// F1 malformed (reproduced true): {"jsonrpc":"2.0","id":900001,"method":"prompts/get"}
}
