package mutate_test

import (
	"fmt"

	"github.com/mcpspec/mcpspec/detect/fuzz/mutate"
)

// The same seed always gives the same cases; Judge says which rules a frame breaks.
func Example() {
	g := mutate.New(3, &mutate.Options{Families: []mutate.Family{mutate.WrongJSONRPC, mutate.BadMethod}})
	for range 3 {
		c := g.Next()
		frame := mutate.WithID(c.Frames[0], 7)
		j := mutate.Judge(frame)
		fmt.Printf("%s: %s\n  %s\n  well-formed: %v", c.Family, c.What, frame, j.Strict)
		if !j.Strict {
			fmt.Printf(" (%s)", j.Why)
		}
		fmt.Println()
	}
	// Output:
	// bad-method: unknown method "prototype"
	//   {"jsonrpc":"2.0","id":7,"method":"prototype"}
	//   well-formed: true
	// bad-method: method 123
	//   {"jsonrpc":"2.0","id":7,"method":123}
	//   well-formed: false (the method is not a string)
	// wrong-jsonrpc: tools/list with jsonrpc 2
	//   {"jsonrpc":2,"id":7,"method":"tools/list","params":{}}
	//   well-formed: false ("jsonrpc" is not "2.0")
}
