package schematest

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// BaseURL is the $id prefix of the schemas in the module's schema/ directory.
const BaseURL = "https://mcpspec.dev/schema/"

// Dir returns the module's schema/ directory: schema/ beside the go.mod found by walking up
// from the working directory (a test's working directory is its package's directory).
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "schema")
		} else if !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("schematest: no go.mod above the working directory")
		}
		dir = up
	}
}

// Doc returns the parsed schema/NAME (e.g. "metrics.v1.json"), for tests that inspect the
// schema itself.
func Doc(t testing.TB, name string) any {
	t.Helper()
	return load(t, filepath.Join(Dir(t), name))
}

// Compile compiles schema/NAME (e.g. "metrics.v1.json") at BaseURL+NAME, with formats asserted.
func Compile(t testing.TB, name string) *jsonschema.Schema {
	t.Helper()
	return CompileFile(t, filepath.Join(Dir(t), name), BaseURL+name)
}

// CompileFile compiles the schema in the file at path (e.g. a third-party schema kept in
// testdata) as the resource url, with formats asserted.
func CompileFile(t testing.TB, path, url string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(url, load(t, path)); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatalf("compile %s: %v", path, err)
	}
	return sch
}

// Validate returns why doc does not follow sch, or nil when it does. It fails t at once when
// doc is not JSON.
func Validate(t testing.TB, sch *jsonschema.Schema, doc []byte) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("not JSON: %v\n%s", err, doc)
	}
	return sch.Validate(v)
}

// load parses the JSON file at path.
func load(t testing.TB, path string) any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc
}
