package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpspec/mcpspec/internal/schematest"
	"github.com/mcpspec/mcpspec/schema"
)

// TestSchemaVerbPrintsEachPublishedSchema: `mcpspec schema NAME` prints schema/NAME.v1.json
// byte for byte, and what it prints compiles as a JSON Schema.
func TestSchemaVerbPrintsEachPublishedSchema(t *testing.T) {
	list, code := runVerb(t, "schema")
	if code != ExitOK {
		t.Fatalf("schema: exit %d", code)
	}
	files, err := filepath.Glob(filepath.Join(schematest.Dir(t), "*.v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 11 {
		t.Fatalf("only %d schemas in schema/", len(files))
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".v1.json")
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(list, name+" ") {
				t.Errorf("'mcpspec schema' does not list %s:\n%s", name, list)
			}
			out, code := runVerb(t, "schema", name)
			if code != ExitOK {
				t.Fatalf("exit %d", code)
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if out != string(want) {
				t.Errorf("printed schema differs from %s", file)
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(out)))
			if err != nil {
				t.Fatal(err)
			}
			c := jsonschema.NewCompiler()
			url := schema.BaseURL + filepath.Base(file)
			if err := c.AddResource(url, doc); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Compile(url); err != nil {
				t.Errorf("compile: %v", err)
			}
		})
	}
}
