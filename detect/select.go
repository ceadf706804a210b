package detect

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/mcpspec/mcpspec/session"
)

// Selection says which tools a detector may call without being told to.
type Selection struct {
	// IncludeDestructive also selects tools annotated destructiveHint: true.
	IncludeDestructive bool
	// IncludeOpenWorld also selects tools annotated openWorldHint: true (they reach outside
	// the server: the network, other services).
	IncludeOpenWorld bool
	// Skip names tools never to select.
	Skip []string
}

// Skipped is a tool left out, and why.
type Skipped struct {
	Tool   string `json:"tool"`
	Reason string `json:"reason"`
}

// Select splits tools into those s allows and those it leaves out. Only explicit annotations
// count: a tool without annotations is selected.
func (s Selection) Select(tools []session.Tool) (chosen []session.Tool, skipped []Skipped) {
	for _, t := range tools {
		a := annotations(t.Annotations)
		switch {
		case slices.Contains(s.Skip, t.Name):
			skipped = append(skipped, Skipped{t.Name, "skipped by name"})
		case a.DestructiveHint != nil && *a.DestructiveHint && !a.readOnly() && !s.IncludeDestructive:
			skipped = append(skipped, Skipped{t.Name, "annotated destructiveHint (include it with --include-destructive)"})
		case a.OpenWorldHint != nil && *a.OpenWorldHint && !s.IncludeOpenWorld:
			skipped = append(skipped, Skipped{t.Name, "annotated openWorldHint: it reaches outside the server (include it with --include-open-world)"})
		default:
			chosen = append(chosen, t)
		}
	}
	return chosen, skipped
}

// toolAnnotations are the hints of a tool's annotations that selection reads.
type toolAnnotations struct {
	ReadOnlyHint    *bool `json:"readOnlyHint"`
	DestructiveHint *bool `json:"destructiveHint"`
	OpenWorldHint   *bool `json:"openWorldHint"`
}

func (a toolAnnotations) readOnly() bool { return a.ReadOnlyHint != nil && *a.ReadOnlyHint }

func annotations(raw json.RawMessage) toolAnnotations {
	var a toolAnnotations
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &a)
	}
	return a
}

// UnknownToolError is a tool a detector was told to call that the server does not list.
type UnknownToolError struct {
	Tool      string
	Available []string
}

// Error implements error.
func (e *UnknownToolError) Error() string {
	return "tool " + strconv.Quote(e.Tool) + " is not in the server's tools/list"
}

// Find returns the tool named name, or an *UnknownToolError.
func Find(tools []session.Tool, name string) (session.Tool, error) {
	var names []string
	for _, t := range tools {
		if t.Name == name {
			return t, nil
		}
		names = append(names, t.Name)
	}
	return session.Tool{}, &UnknownToolError{Tool: name, Available: names}
}
