package score_test

import (
	"encoding/json"
	"fmt"

	"github.com/mcpspec/mcpspec/analyze/inventory"
	"github.com/mcpspec/mcpspec/analyze/score"
)

func Example() {
	var inv inventory.Inventory
	_ = json.Unmarshal([]byte(`{"protocolVersion":"2025-11-25","serverInfo":{"name":"demo","version":"1"},
		"capabilities":{"tools":{}},"tools":[
		{"name":"get_data","description":"Gets data.","inputSchema":{"type":"object","properties":{"id":{"type":"string"}}}}]}`), &inv)
	// Only the metadata checks apply (no probes, token report, audit or golden set), and one
	// of them passes: the parameter declares its type. 4 of 25 points is 16.
	r := score.Rate(&score.Input{Inventory: &inv})
	fmt.Println(score.BadgeText(r))
	for _, c := range r.Checks {
		if c.Applies && c.Earned < c.Possible {
			fmt.Printf("%s %v/%v: %s\n", c.ID, c.Earned, c.Possible, c.Reason)
		}
	}
	// Output:
	// 16 · v1
	// metadata.description 0/8: 0 of 1 tools have a description that says more than the name
	// metadata.parameter-descriptions 0/5: 0 of 1 parameters have a description
	// metadata.titles 0/2: 0 of 1 tools have a title
	// metadata.annotations 0/4: 0 of 1 tools declare readOnlyHint or destructiveHint
	// metadata.output-schemas 0/2: 0 of 1 tools declare an output schema
}
