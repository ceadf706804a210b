// Package toolschema holds a server's tool contracts for strict runs: each tool's inputSchema,
// checked against the arguments before a tools/call is sent, and its outputSchema, checked
// against the structuredContent that comes back (MCP: a tool with an outputSchema must return
// conforming structuredContent). Schemas are compiled once, on first use, with the same
// compiler the assertions use (draft 2020-12 unless $schema says otherwise, no remote $ref).
package toolschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpspec/mcpspec/assert"
)

// Tools is the contracts of one server's tools. It is safe for concurrent use.
type Tools struct {
	mu       sync.Mutex // guards the maps
	input    map[string]json.RawMessage
	output   map[string]json.RawMessage
	compiled map[string]compiled // by tool and direction
}

// compiled is a schema compiled once, or why it did not compile.
type compiled struct {
	s   *jsonschema.Schema
	err error
}

// New returns empty contracts; [Tools.Set] fills them.
func New() *Tools {
	return &Tools{input: map[string]json.RawMessage{}, output: map[string]json.RawMessage{}, compiled: map[string]compiled{}}
}

// Set records a tool's schemas (raw JSON, nil when absent).
func (t *Tools) Set(name string, input, output json.RawMessage) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(input) > 0 {
		t.input[name] = input
	}
	if len(output) > 0 {
		t.output[name] = output
	}
	delete(t.compiled, "in:"+name)
	delete(t.compiled, "out:"+name)
}

// Known reports whether the tool was listed with an inputSchema.
func (t *Tools) Known(name string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.input[name]
	return ok
}

// Violation is a strict check that failed: what was checked, against which schema, and why.
type Violation struct {
	// Tool is the tool; What is "arguments" or "structuredContent".
	Tool, What string
	// Detail is the schema errors, one per violation, joined by "; ", or why the schema
	// could not be used.
	Detail string
}

// Error implements error.
func (v *Violation) Error() string {
	switch v.What {
	case "arguments":
		return fmt.Sprintf("tool %q: the arguments do not match its inputSchema: %s", v.Tool, v.Detail)
	case "inputSchema", "outputSchema":
		return fmt.Sprintf("tool %q: its %s does not compile: %s", v.Tool, v.What, v.Detail)
	}
	return fmt.Sprintf("tool %q: %s does not match its outputSchema: %s", v.Tool, v.What, v.Detail)
}

// CheckArgs validates arguments (decoded JSON or plain Go values) against the tool's
// inputSchema. A tool not listed, or listed without a schema, passes.
func (t *Tools) CheckArgs(tool string, args any) error {
	s, err := t.schema(tool, "in:", t.inputOf)
	if err != nil {
		return &Violation{Tool: tool, What: "inputSchema", Detail: err.Error()}
	}
	if s == nil {
		return nil
	}
	if args == nil {
		args = map[string]any{}
	}
	if err := s.Validate(assert.Normalize(args)); err != nil {
		return &Violation{Tool: tool, What: "arguments", Detail: assert.SchemaErrors(err)}
	}
	return nil
}

// CheckResult validates a tools/call result (raw JSON) against the tool's outputSchema: its
// structuredContent must be there and conform. A tool without an outputSchema passes, and so
// does a tool error (isError: true), which need not conform.
func (t *Tools) CheckResult(tool string, result json.RawMessage) error {
	s, err := t.schema(tool, "out:", t.outputOf)
	if err != nil {
		return &Violation{Tool: tool, What: "outputSchema", Detail: err.Error()}
	}
	if s == nil {
		return nil
	}
	var r struct {
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return &Violation{Tool: tool, What: "the result", Detail: "not a JSON object: " + err.Error()}
	}
	if r.IsError {
		return nil
	}
	if len(r.StructuredContent) == 0 || string(r.StructuredContent) == "null" {
		return &Violation{Tool: tool, What: "the result", Detail: "no structuredContent, though the tool declares an outputSchema"}
	}
	doc, err := assert.DecodeJSON(r.StructuredContent)
	if err != nil {
		return &Violation{Tool: tool, What: "structuredContent", Detail: err.Error()}
	}
	if err := s.Validate(doc); err != nil {
		return &Violation{Tool: tool, What: "structuredContent", Detail: assert.SchemaErrors(err)}
	}
	return nil
}

func (t *Tools) inputOf(tool string) json.RawMessage  { return t.input[tool] }
func (t *Tools) outputOf(tool string) json.RawMessage { return t.output[tool] }

// schema compiles (once) the schema raw(tool) returns; nil when there is none.
func (t *Tools) schema(tool, dir string, raw func(string) json.RawMessage) (*jsonschema.Schema, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.compiled[dir+tool]; ok {
		return c.s, c.err
	}
	src := raw(tool)
	if len(src) == 0 {
		return nil, nil
	}
	var c compiled
	doc, err := assert.DecodeJSON(src)
	if err == nil {
		c.s, err = assert.CompileSchema(doc)
	}
	if err != nil {
		c.err = errors.Unwrap(err)
		if c.err == nil {
			c.err = err
		}
	}
	t.compiled[dir+tool] = c
	return c.s, c.err
}
