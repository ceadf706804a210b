package assert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Step kinds a [Subject] may describe; they decide what "$" means and what [Subject.Text] reads.
const (
	KindTool     = "tool"     // tools/call: $ = {content, structuredContent, isError}
	KindRead     = "read"     // resources/read: $ = {contents}
	KindPrompt   = "prompt"   // prompts/get: $ = {description, messages}
	KindList     = "list"     // tools|resources|prompts|templates list: $ = {items: [...]}
	KindComplete = "complete" // completion/complete: $ = {completion: {values, ...}}
	KindRequest  = "request"  // raw request: $ = the raw result
	// KindError is a JSON-RPC error expected by the test: $ = {error: {code, message, data}}.
	KindError = "error"
)

// Vars gives checkers access to the variables visible to a test: templated expected values
// ("{{userId}}") are expanded at check time, and expr sees them as `vars`.
// collection.Vars implements it.
type Vars interface {
	// Expand substitutes variable references in v, recursively through maps and slices.
	Expand(v any) (any, error)
	// Values returns every visible variable, resolved, keyed by name.
	Values() map[string]any
}

// Subject is what an assertion checks: the decoded result of one request plus its context.
// A Subject is built by the runner once per attempt and is read-only while checkers run, so
// checkers of one subject may run concurrently.
type Subject struct {
	// Kind is one of the Kind constants.
	Kind string
	// Raw is the result document as received; Doc is Raw decoded (numbers as float64).
	Raw json.RawMessage
	Doc any
	// Latency is the wire latency of the request.
	Latency time.Duration
	// OutputSchema is the called tool's advertised outputSchema (tools/list), if any; the
	// `schema: output` assertion validates structuredContent against it.
	OutputSchema json.RawMessage
	// Vars are the test's variables; nil means none.
	Vars Vars
	// UpdateSnapshots makes snapshot assertions (re)write their golden file instead of
	// comparing (the CLI's --update).
	UpdateSnapshots bool
	// SnapshotsWritten lists the golden files snapshot assertions created or changed under
	// UpdateSnapshots (one unchanged is not rewritten nor listed).
	SnapshotsWritten []string
}

// NewSubject decodes raw (a JSON document) into a Subject of the given kind.
func NewSubject(kind string, raw json.RawMessage) (*Subject, error) {
	doc, err := DecodeJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("assert: decode %s result: %w", kind, err)
	}
	return &Subject{Kind: kind, Raw: raw, Doc: doc}, nil
}

// DecodeJSON decodes one JSON document into plain Go values (map[string]any, []any, string,
// float64, bool, nil), rejecting trailing data.
func DecodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return v, nil
}

// IsError reports whether the result carries isError: true (a tool error), or is a JSON-RPC error.
func (s *Subject) IsError() bool {
	if s.Kind == KindError {
		return true
	}
	m, ok := s.Doc.(map[string]any)
	if !ok {
		return false
	}
	b, _ := m["isError"].(bool)
	return b
}

// Text returns the human-readable text of the result: the text content items of a tool result,
// the text contents of a read, the text messages of a prompt, the error message of a JSON-RPC
// error, joined by newlines; for other kinds, the canonical JSON of the document.
func (s *Subject) Text() string {
	m, _ := s.Doc.(map[string]any)
	var parts []string
	addText := func(item any) {
		if im, ok := item.(map[string]any); ok {
			if t, ok := im["text"].(string); ok {
				parts = append(parts, t)
			}
			if r, ok := im["resource"].(map[string]any); ok {
				if t, ok := r["text"].(string); ok {
					parts = append(parts, t)
				}
			}
		}
	}
	switch {
	case m == nil:
	case s.Kind == KindTool:
		items, _ := m["content"].([]any)
		for _, it := range items {
			addText(it)
		}
		return strings.Join(parts, "\n")
	case s.Kind == KindRead:
		items, _ := m["contents"].([]any)
		for _, it := range items {
			addText(it)
		}
		return strings.Join(parts, "\n")
	case s.Kind == KindPrompt:
		msgs, _ := m["messages"].([]any)
		for _, msg := range msgs {
			if mm, ok := msg.(map[string]any); ok {
				addText(mm["content"])
			}
		}
		return strings.Join(parts, "\n")
	case s.Kind == KindError:
		if e, ok := m["error"].(map[string]any); ok {
			msg, _ := e["message"].(string)
			return msg
		}
	}
	return CanonicalJSON(s.Doc)
}

// mimeTypes lists the MIME types of the result's content items (and embedded resources).
func (s *Subject) mimeTypes() []string {
	m, _ := s.Doc.(map[string]any)
	var out []string
	var items []any
	switch s.Kind {
	case KindRead:
		items, _ = m["contents"].([]any)
	default:
		items, _ = m["content"].([]any)
	}
	for _, it := range items {
		im, ok := it.(map[string]any)
		if !ok {
			continue
		}
		if mt, ok := im["mimeType"].(string); ok {
			out = append(out, mt)
		}
		if r, ok := im["resource"].(map[string]any); ok {
			if mt, ok := r["mimeType"].(string); ok {
				out = append(out, mt)
			}
		}
	}
	return out
}

// vars returns the subject's variables as a map, never nil.
func (s *Subject) vars() map[string]any {
	if s.Vars == nil {
		return map[string]any{}
	}
	if v := s.Vars.Values(); v != nil {
		return v
	}
	return map[string]any{}
}

// expand expands templated expected values; without Vars it returns v unchanged.
func (s *Subject) expand(v any) (any, error) {
	if s.Vars == nil {
		return v, nil
	}
	return s.Vars.Expand(v)
}
