package toolschema

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestChecks(t *testing.T) {
	tools := New()
	tools.Set("add", json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`),
		json.RawMessage(`{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}`))
	tools.Set("echo", json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`), nil)
	tools.Set("broken", json.RawMessage(`{"type":"object","properties":{"a":{"type":"nope"}}}`), json.RawMessage(`{"type":7}`))

	args := []struct {
		tool string
		args any
		want string // "" passes
	}{
		{"add", map[string]any{"a": 1, "b": 2.5}, ""},
		{"add", map[string]any{"a": "1", "b": 2}, "do not match its inputSchema"},
		{"add", nil, "missing properties"},
		{"echo", map[string]any{"text": "hi"}, ""},
		{"echo", map[string]any{}, "do not match"},
		{"unlisted", map[string]any{"x": 1}, ""},
		{"broken", map[string]any{}, "inputSchema does not compile"},
	}
	for _, c := range args {
		err := tools.CheckArgs(c.tool, c.args)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("CheckArgs(%s, %v) = %v, want %q", c.tool, c.args, err, c.want)
		}
		var v *Violation
		if err != nil && !errors.As(err, &v) {
			t.Errorf("CheckArgs error %T is not a *Violation", err)
		}
	}
	results := []struct {
		tool, result, want string
	}{
		{"add", `{"content":[],"structuredContent":{"sum":3}}`, ""},
		{"add", `{"content":[],"structuredContent":{"sum":"3"}}`, "structuredContent does not match its outputSchema"},
		{"add", `{"content":[{"type":"text","text":"3"}]}`, "no structuredContent"},
		{"add", `{"content":[],"isError":true}`, ""},
		{"echo", `{"content":[]}`, ""},
		{"broken", `{"structuredContent":{}}`, "outputSchema does not compile"},
		{"add", `[1]`, "not a JSON object"},
	}
	for _, c := range results {
		err := tools.CheckResult(c.tool, json.RawMessage(c.result))
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("CheckResult(%s, %s) = %v, want %q", c.tool, c.result, err, c.want)
		}
	}
	if !tools.Known("add") || tools.Known("unlisted") {
		t.Error("Known")
	}
}
