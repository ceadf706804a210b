package collection_test

import (
	"fmt"

	"github.com/mcpspec/mcpspec/collection"
)

func ExampleParse() {
	doc := []byte(`
name: Demo
server: testserver
tests:
  - name: Echo
    call: echo
    with: {text: "{{greeting}}"}
    expect:
      - contains: hello
    asserts: []
`)
	_, err := collection.Parse("demo.yaml", doc, &collection.LoadOptions{Vars: map[string]string{"greeting": "hello"}})
	fmt.Println(err)

	c, err := collection.Parse("demo.yaml", doc[:len(doc)-len("    asserts: []\n")], &collection.LoadOptions{Vars: map[string]string{"greeting": "hello"}})
	if err != nil {
		panic(err)
	}
	t := c.Tests[0]
	in, _ := c.Vars().ExpandMap(t.Step.(*collection.ToolCall).Input)
	fmt.Println(t.ID, t.Kind(), t.Step.Target(), in["text"], t.Assertions[0].Spec.Type)
	// Output:
	// demo.yaml:10:5: unknown key "asserts" in test "Echo" (did you mean "assertions"?)
	// echo tool echo hello contains
}
