package docsgen

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpspec/mcpspec/analyze/inventory"
)

// FuzzRender: any tool a server may send renders in both formats without a panic, and no
// server text breaks a Markdown table row.
func FuzzRender(f *testing.F) {
	f.Add("t", "d", `{"type":"object","properties":{"a":{"type":"string"}}}`)
	f.Add("a|b", "x\n- y\n<b>", `{"properties":{"p|q":{"enum":["|","`+"```"+`"],"default":{"k":[1]}}},"required":["p|q"]}`)
	f.Add("", "", `{"$ref":"#/$defs/x","$defs":{"x":{"$ref":"#/$defs/x"}}}`)
	f.Add("n", "", `{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"array","items":{"$ref":"#"}}}}}}`)
	f.Fuzz(func(t *testing.T, name, desc, schema string) {
		tool := map[string]any{"name": name, "description": desc}
		if json.Valid([]byte(schema)) {
			tool["inputSchema"] = json.RawMessage(schema)
		}
		raw, err := json.Marshal(map[string]any{"tools": []any{tool}})
		if err != nil {
			return
		}
		var inv inventory.Inventory
		if json.Unmarshal(raw, &inv) != nil {
			return
		}
		for _, format := range []Format{Markdown, HTML} {
			if _, err := Render(&inv, format, nil); err != nil {
				t.Fatal(err)
			}
		}
		files, _ := Render(&inv, Markdown, nil)
		for _, line := range strings.Split(string(files["README.md"]), "\n") {
			if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| Parameter") {
				if n := strings.Count(line, "|") - strings.Count(line, `\|`); n != 8 {
					t.Fatalf("a parameter row has %d separators: %q", n, line)
				}
			}
		}
	})
}
