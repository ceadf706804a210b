package cli

import (
	"encoding/json"
	"testing"

	"github.com/mcpspec/mcpspec/session"
)

func TestInspectCompletion(t *testing.T) {
	c := newCompleter()
	c.setTools([]session.Tool{
		{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		{Name: "add", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"},"also":{}}}`)},
		{Name: "addAll", InputSchema: json.RawMessage(`{}`)},
	})
	cases := []struct {
		line    string
		want    string
		changes bool
	}{
		{".ca", ".call ", true},
		{".re", ".re", false},         // .read, .resources, .request: nothing in common to add
		{".res", ".resources ", true}, // one left
		{".pro", ".prompt", true},     // .prompt, .prompts
		{".call e", ".call echo ", true},
		{".call ad", ".call add", true}, // add, addAll
		{".schema ec", ".schema echo ", true},
		{`.call echo {"t`, `.call echo {"text": `, true},
		{`.call add {"a": 1, "b`, `.call add {"a": 1, "b": `, true},
		{`.call add {"al`, `.call add {"also": `, true},
		{`.call add {"a`, `.call add {"a`, false}, // a, also: the prefix is all they share
		{`.call nope {"`, `.call nope {"`, false},
		{".read mcp", ".read mcp", false},
		{".zz", ".zz", false},
	}
	for _, tc := range cases {
		got, pos, ok := c.complete(tc.line, len(tc.line), '\t')
		if ok != tc.changes {
			t.Errorf("%q: ok = %v, want %v (got %q)", tc.line, ok, tc.changes, got)
			continue
		}
		if !ok {
			continue
		}
		if got != tc.want || pos != len(tc.want) {
			t.Errorf("%q completes to %q (cursor %d), want %q (cursor %d)", tc.line, got, pos, tc.want, len(tc.want))
		}
	}
	// Text after the cursor stays where it was.
	if got, pos, ok := c.complete(".call ec {}", len(".call ec"), '\t'); !ok || got != ".call echo  {}" || pos != len(".call echo ") {
		t.Errorf("mid-line: %q %d %v", got, pos, ok)
	}
	// Only Tab completes.
	if _, _, ok := c.complete(".ca", 3, 'x'); ok {
		t.Error("a key other than Tab completed")
	}
}
