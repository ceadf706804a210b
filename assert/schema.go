package assert

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpspec/mcpspec/result"
)

// noLoader refuses every external reference: schemas are checked as given, never by fetching
// files or URLs a collection or a server named.
type noLoader struct{}

// Load implements jsonschema.URLLoader.
func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema reference %q not allowed", url)
}

// CompileSchema compiles a JSON Schema given as plain Go values (draft 2020-12 unless it says
// otherwise in $schema). External references are refused.
func CompileSchema(doc any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	const loc = "mcpspec:///inline-schema.json"
	if err := c.AddResource(loc, Normalize(doc)); err != nil {
		return nil, err
	}
	return c.Compile(loc)
}

// SchemaErrors renders a schema validation error as one line per violation ("at '/sum': got
// string, want number"), joined by "; ".
func SchemaErrors(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	lines := strings.Split(strings.TrimSpace(ve.Error()), "\n")
	if len(lines) > 1 {
		lines = lines[1:]
	}
	for i, l := range lines {
		lines[i] = strings.TrimLeft(strings.TrimSpace(l), "- ")
	}
	return strings.Join(lines, "; ")
}

type schemaChecker struct {
	path   *Path
	inline *jsonschema.Schema // nil: the tool's outputSchema

	mu    sync.Mutex // guards cache
	cache map[string]*jsonschema.Schema
}

// maxCachedSchemas bounds the per-checker cache of compiled output schemas.
const maxCachedSchemas = 64

func compileSchema(spec *Spec, _ *CompileOptions) (Checker, error) {
	p, err := optPath(spec)
	if err != nil {
		return nil, err
	}
	c := &schemaChecker{path: p}
	switch v := spec.Schema.(type) {
	case nil:
	case string:
		if v != "output" {
			return nil, fieldErr("schema", "schema must be \"output\" or an inline JSON Schema, got %q", v)
		}
	case map[string]any, bool:
		if c.inline, err = CompileSchema(v); err != nil {
			return nil, &SpecError{Field: "schema", Err: fmt.Errorf("invalid JSON Schema: %w", err)}
		}
	default:
		return nil, fieldErr("schema", "schema must be \"output\" or an inline JSON Schema object")
	}
	return c, nil
}

// outputSchema compiles (or finds in the cache) the advertised schema.
func (c *schemaChecker) outputSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	key := string(raw)
	c.mu.Lock()
	defer c.mu.Unlock()
	if sch, ok := c.cache[key]; ok {
		return sch, nil
	}
	doc, err := DecodeJSON(raw)
	if err != nil {
		return nil, err
	}
	sch, err := CompileSchema(doc)
	if err != nil {
		return nil, err
	}
	if c.cache == nil || len(c.cache) >= maxCachedSchemas {
		c.cache = map[string]*jsonschema.Schema{}
	}
	c.cache[key] = sch
	return sch, nil
}

func (c *schemaChecker) Check(ctx context.Context, s *Subject) *result.Failure {
	sch := c.inline
	target, where := s.Doc, "$"
	m, _ := s.Doc.(map[string]any)
	if sch == nil {
		if len(s.OutputSchema) == 0 {
			return failure("schema", "", "the tool's outputSchema", "none",
				"schema: output: the tool advertises no outputSchema")
		}
		var err error
		if sch, err = c.outputSchema(s.OutputSchema); err != nil {
			return failure("schema", "", "a valid outputSchema", "", "the tool's outputSchema does not compile: %v", err)
		}
		if c.path == nil {
			sc, ok := m["structuredContent"]
			if !ok {
				return failure("schema", "$.structuredContent", "structuredContent", "absent",
					"$.structuredContent: the tool has an outputSchema but returned no structuredContent; response %s",
					Excerpt(s.Doc, maxResponse))
			}
			target, where = sc, "$.structuredContent"
		}
	} else if c.path == nil && s.Kind == KindTool {
		if sc, ok := m["structuredContent"]; ok {
			target, where = sc, "$.structuredContent"
		}
	}
	if c.path != nil {
		var f *result.Failure
		if target, f = at(ctx, "schema", c.path, s); f != nil {
			return f
		}
		where = c.path.String()
	}
	if err := sch.Validate(target); err != nil {
		msg := SchemaErrors(err)
		return failure("schema", where, "valid against the schema", Excerpt(target, maxActual),
			"%s: does not match the schema: %s", where, truncate(msg, maxResponse))
	}
	return nil
}
