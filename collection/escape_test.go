package collection

import "testing"

// TestEscapeTemplate: text escaped with EscapeTemplate expands back to itself, whatever the
// variables hold, and references no variable.
func TestEscapeTemplate(t *testing.T) {
	v := newVars(func(string) (string, bool) { return "SECRET", true }, nil, map[string]any{"a": "A"})
	for _, s := range []string{
		"leak{{env.DB_URL}}", "{{ a }}{{a}}", `\{{a}}`, `\\{{a}}`, "a{{", "{{}}", "plain", "{{secret.TOKEN}} and {{env.X}}",
	} {
		e := EscapeTemplate(s)
		if refs := References(e); len(refs) != 0 {
			t.Errorf("EscapeTemplate(%q) = %q references %v", s, e, refs)
		}
		if got, err := v.ExpandString(e); err != nil || got != s {
			t.Errorf("ExpandString(EscapeTemplate(%q) = %q) = %q, %v; want it back", s, e, got, err)
		}
		if got := Unescape(e); got != s {
			t.Errorf("Unescape(%q) = %q, want %q", e, got, s)
		}
		if got := (&ToolCall{Tool: e}).Name(v); got != s {
			t.Errorf("ToolCall{%q}.Name = %q, want %q", e, got, s)
		}
	}
}
