package schematest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEverySchemaCompiles compiles each schema/*.json, which also proves Dir finds schema/
// from a package two levels down.
func TestEverySchemaCompiles(t *testing.T) {
	names, err := filepath.Glob(filepath.Join(Dir(t), "*.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no schemas in %s: %v", Dir(t), err)
	}
	for _, n := range names {
		Compile(t, filepath.Base(n))
	}
}

// TestValidate checks that a conforming document passes and a wrong one, including a bad
// format, is refused.
func TestValidate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	const s = `{"type":"object","required":["at"],"properties":{"at":{"type":"string","format":"date-time"}}}`
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	sch := CompileFile(t, path, "https://example.com/s.json")
	if err := Validate(t, sch, []byte(`{"at":"2024-01-02T03:04:05Z"}`)); err != nil {
		t.Errorf("conforming document refused: %v", err)
	}
	for _, bad := range []string{`{}`, `{"at":1}`, `{"at":"yesterday"}`} {
		if err := Validate(t, sch, []byte(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		} else if !strings.Contains(err.Error(), "s.json") {
			t.Errorf("%s: error does not name the schema: %v", bad, err)
		}
	}
}
