package assert_test

import (
	"context"
	"fmt"

	"github.com/mcpspec/mcpspec/assert"
)

func ExampleRegistry_Compile() {
	reg := assert.Builtins()
	check, err := reg.Compile(&assert.Spec{
		Type: "equals", Path: "$.structuredContent.sum", Value: 5,
		Keys: []string{"type", "path", "value"},
	}, nil)
	if err != nil {
		panic(err)
	}
	subject, _ := assert.NewSubject(assert.KindTool, []byte(`{"content":[{"type":"text","text":"4"}],"structuredContent":{"sum":4}}`))
	f := check.Check(context.Background(), subject)
	fmt.Println(f.Message)
	// Output: $.structuredContent.sum: expected 5, got 4
}
