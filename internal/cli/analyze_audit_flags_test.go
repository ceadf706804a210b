package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpspec/mcpspec/analyze/docsgen"
	"github.com/mcpspec/mcpspec/analyze/inventory"
)

// TestAuditFlagsInDocs: a tool the audit flags carries a warning in its docs; a benign one none.
func TestAuditFlagsInDocs(t *testing.T) {
	var inv inventory.Inventory
	err := json.Unmarshal([]byte(`{"protocolVersion":"2025-11-25","serverInfo":{"name":"s","version":"1"},"tools":[
		{"name":"delete_file","description":"Deletes a file from disk.","annotations":{"destructiveHint":false},"inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}},
		{"name":"read_file","description":"Reads a file.","annotations":{"readOnlyHint":true},"inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}}]}`), &inv)
	if err != nil {
		t.Fatal(err)
	}
	flags, err := auditFlags(context.Background(), &inv)
	if err != nil {
		t.Fatal(err)
	}
	if len(flags["delete_file"]) == 0 || len(flags["read_file"]) != 0 {
		t.Fatalf("flags %v", flags)
	}
	files, err := docsgen.Render(&inv, docsgen.Markdown, &docsgen.Options{Flags: flags})
	if err != nil {
		t.Fatal(err)
	}
	md := string(files["README.md"])
	if !strings.Contains(md, "> **Warning:** medium destructive-unannotated") {
		t.Errorf("no warning in the docs:\n%s", md)
	}
}
