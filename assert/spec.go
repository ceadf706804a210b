package assert

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/mcpspec/mcpspec/result"
)

// Checker is a compiled assertion. Check returns nil when the assertion holds and a Failure
// stating path, expectation and what came back otherwise. Check never panics and is safe for
// concurrent use; it honours ctx for anything that may take time (expressions).
type Checker interface {
	Check(ctx context.Context, s *Subject) *result.Failure
}

// Spec is an assertion as written in a collection, decoded but not yet compiled. The collection
// loader fills it from YAML (both the `type: …` form and the shorthand), recording which keys were
// present in Keys; [Registry.Compile] turns it into a [Checker].
type Spec struct {
	// Type names the assertion ("equals", "expr" …); aliases are resolved by the registry.
	Type string
	// Path is a JSONPath into the result document; its meaning when empty depends on the type.
	Path string
	// Value is an expected value (equals, contains, length, isError). It may contain variable
	// templates, expanded at check time.
	Value any
	// Pattern is a regular expression (matches).
	Pattern string
	// Expected is a type name (type) or a MIME type (mimeType).
	Expected string
	// Operator compares lengths: eq, ne, gt, gte, lt, lte (length; default eq).
	Operator string
	// Max is the latency bound (latency: maxMs or max).
	Max time.Duration
	// Schema is "output" (or nil: the tool's outputSchema) or an inline JSON Schema (schema).
	Schema any
	// Expr is an expr-lang expression returning bool (expr).
	Expr string
	// Name names a snapshot file (snapshot); the loader defaults it to the test id.
	Name string
	// Keys lists the keys present in the source, to tell "absent" from "zero" (value: null).
	Keys []string
}

// Has reports whether key was present in the source.
func (s *Spec) Has(key string) bool {
	for _, k := range s.Keys {
		if k == key {
			return true
		}
	}
	return false
}

// SpecError is a compile error about one key of a spec; the loader turns Field into a position.
type SpecError struct {
	// Field is the spec key at fault ("pattern", "expr" …); empty means the spec as a whole.
	Field string
	Err   error
}

// Error implements error.
func (e *SpecError) Error() string {
	if e.Field == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("%s: %v", e.Field, e.Err)
}

// Unwrap returns the underlying error.
func (e *SpecError) Unwrap() error { return e.Err }

// fieldErr builds a *SpecError.
func fieldErr(field, format string, args ...any) error {
	return &SpecError{Field: field, Err: fmt.Errorf(format, args...)}
}

// CompileOptions carries what compiling needs beyond the spec. A nil *CompileOptions means
// defaults.
type CompileOptions struct {
	// SnapshotDir is the directory holding snapshot golden files; required by snapshot.
	SnapshotDir string
	// Expr bounds expression evaluation; zero fields take the defaults of [DefaultExprLimits].
	Expr ExprLimits
}

// Builtin describes one assertion type.
type Builtin struct {
	// Name is the canonical type name; Aliases are accepted too.
	Name    string
	Aliases []string
	// Doc is a one-line description (for `mcpspec` help and editors).
	Doc string
	// Fields lists the keys the type accepts besides "type"; Required those it needs.
	Fields   []string
	Required []string
	// Shorthand is the key a scalar fills in the short form (`- exists: $.content` → path).
	// Empty means the short form takes a mapping only.
	Shorthand string
	// Compile builds the checker; the registry has already checked Fields and Required.
	Compile func(spec *Spec, opts *CompileOptions) (Checker, error)
}

// Registry maps assertion type names to their [Builtin]. It is built explicitly (see
// [Builtins]) and read-only once in use: Register is not safe concurrently with lookups.
type Registry struct {
	byName map[string]*Builtin
	order  []*Builtin
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{byName: map[string]*Builtin{}} }

// Register adds b under its name and aliases; a name already taken is an error.
func (r *Registry) Register(b *Builtin) error {
	if b == nil || b.Name == "" || b.Compile == nil {
		return errors.New("assert: register: builtin needs a name and a Compile func")
	}
	for _, n := range append([]string{b.Name}, b.Aliases...) {
		if _, dup := r.byName[n]; dup {
			return fmt.Errorf("assert: register %q: name already registered", n)
		}
	}
	for _, n := range append([]string{b.Name}, b.Aliases...) {
		r.byName[n] = b
	}
	r.order = append(r.order, b)
	return nil
}

// Lookup returns the builtin for a name or alias.
func (r *Registry) Lookup(name string) (*Builtin, bool) {
	b, ok := r.byName[name]
	return b, ok
}

// Names returns every accepted type name and alias, sorted.
func (r *Registry) Names() []string {
	return slices.Sorted(maps.Keys(r.byName))
}

// All returns the builtins in registration order.
func (r *Registry) All() []*Builtin { return append([]*Builtin(nil), r.order...) }

// Compile checks spec's keys against its type and compiles it. Errors are *SpecError when
// they concern one key.
func (r *Registry) Compile(spec *Spec, opts *CompileOptions) (Checker, error) {
	if opts == nil {
		opts = &CompileOptions{}
	}
	b, ok := r.Lookup(spec.Type)
	if !ok {
		return nil, fieldErr("type", "unknown assertion type %q", spec.Type)
	}
	for _, k := range spec.Keys {
		if k == "type" {
			continue
		}
		if !contains(b.Fields, k) {
			return nil, fieldErr(k, "key %q is not used by %s assertions (accepted: %v)", k, b.Name, b.Fields)
		}
	}
	for _, k := range b.Required {
		if !spec.Has(k) {
			return nil, fieldErr("", "%s assertion needs %q", b.Name, k)
		}
	}
	c, err := b.Compile(spec, opts)
	if err != nil {
		var se *SpecError
		if errors.As(err, &se) {
			return nil, err
		}
		return nil, &SpecError{Err: err}
	}
	return c, nil
}

// contains reports whether list holds s.
func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// Builtins returns a new registry holding every built-in assertion type.
func Builtins() *Registry {
	r := NewRegistry()
	for _, b := range []*Builtin{
		{Name: "schema", Doc: "validate against an inline JSON Schema, or the tool's outputSchema (schema: output)",
			Fields: []string{"schema", "path"}, Shorthand: "schema", Compile: compileSchema},
		{Name: "equals", Doc: "the value at path equals value",
			Fields: []string{"path", "value"}, Required: []string{"path", "value"}, Compile: compileEquals},
		{Name: "contains", Doc: "string contains / array has element / object has key; without path, the response text contains value",
			Fields: []string{"path", "value"}, Required: []string{"value"}, Shorthand: "value", Compile: compileContains},
		{Name: "exists", Doc: "the path selects something",
			Fields: []string{"path"}, Required: []string{"path"}, Shorthand: "path", Compile: compileExists(true)},
		{Name: "notExists", Doc: "the path selects nothing",
			Fields: []string{"path"}, Required: []string{"path"}, Shorthand: "path", Compile: compileExists(false)},
		{Name: "matches", Aliases: []string{"regex"}, Doc: "the string at path (default: the response text) matches pattern",
			Fields: []string{"path", "pattern"}, Required: []string{"pattern"}, Shorthand: "pattern", Compile: compileMatches},
		{Name: "type", Doc: "the value at path has the expected JSON type",
			Fields: []string{"path", "expected"}, Required: []string{"path", "expected"}, Compile: compileType},
		{Name: "length", Doc: "the length of the string/array/object at path compared with value (operator eq|ne|gt|gte|lt|lte)",
			Fields: []string{"path", "operator", "value"}, Required: []string{"path", "value"}, Compile: compileLength},
		{Name: "latency", Doc: "the request took at most max (maxMs: milliseconds, or max: a duration)",
			Fields: []string{"maxMs", "max"}, Shorthand: "max", Compile: compileLatency},
		{Name: "mimeType", Doc: "some content item has the expected MIME type (type/* matches a family)",
			Fields: []string{"expected"}, Required: []string{"expected"}, Shorthand: "expected", Compile: compileMimeType},
		{Name: "isError", Doc: "the tool result's isError is value (default true)",
			Fields: []string{"value"}, Shorthand: "value", Compile: compileIsError},
		{Name: "snapshot", Doc: "the value at path (default $) equals the golden file <name>.json (rewritten with --update)",
			Fields: []string{"name", "path"}, Shorthand: "name", Compile: compileSnapshot},
		{Name: "expr", Aliases: []string{"expression"}, Doc: "an expr-lang boolean over response, vars, latency (ms), isError, text",
			Fields: []string{"expr"}, Required: []string{"expr"}, Shorthand: "expr", Compile: compileExpr},
	} {
		if err := r.Register(b); err != nil {
			panic(err) // a programming error in this list, caught by every test
		}
	}
	return r
}
