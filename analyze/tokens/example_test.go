package tokens_test

import (
	"encoding/json"
	"fmt"

	"github.com/mcpspec/mcpspec/analyze/tokens"
	"github.com/mcpspec/mcpspec/session"
)

// Counts checked against the reference tiktoken: 31, 27 and 14 cl100k_base tokens.
func Example() {
	c, err := tokens.NewCounter(tokens.Cl100kBase)
	if err != nil {
		fmt.Println(err)
		return
	}
	tool := session.Tool{Name: "echo", Description: "Returns text unchanged.",
		Raw: json.RawMessage(`{"name":"echo","title":"Echo","description":"Returns text unchanged.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}`)}
	r, err := tokens.Measure(c, []session.Tool{tool})
	if err != nil {
		fmt.Println(err)
		return
	}
	t := r.Tools[0]
	fmt.Printf("%s: full %d, core %d = name %d + description %d + schema %d + structure %d\n",
		t.Tool, t.Full, t.Core, t.Name, t.Description, t.Schema, t.Structure)
	// Output: echo: full 31, core 27 = name 1 + description 4 + schema 14 + structure 8
}
