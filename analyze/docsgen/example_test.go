package docsgen_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpspec/mcpspec/analyze/docsgen"
	"github.com/mcpspec/mcpspec/analyze/inventory"
)

func Example() {
	var inv inventory.Inventory
	_ = json.Unmarshal([]byte(`{"serverInfo":{"name":"demo","version":"1.0"},"tools":[
		{"name":"add","description":"Adds *two* numbers.","annotations":{"readOnlyHint":true},
		 "inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number","minimum":0}},"required":["a","b"]}}]}`), &inv)
	files, err := docsgen.Render(&inv, docsgen.Markdown, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	md := string(files["README.md"])
	start := strings.Index(md, "### `add`")
	end := strings.Index(md, "Example call")
	fmt.Print(md[start:end])
	// Output:
	// ### `add`
	//
	// `read-only`
	//
	// Adds \*two\* numbers.
	//
	// | Parameter | Type | Required | Default | Values | Constraints | Description |
	// |---|---|---|---|---|---|---|
	// | `a` | number | **yes** |  |  |  |  |
	// | `b` | number | **yes** |  |  | ≥ 0 |  |
	//
}
