package cli

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBenchArgsFromSchema: bench makes arguments the way the detectors do (internal/synth), so
// a tool whose schema uses $ref or anyOf is benched, not skipped.
func TestBenchArgsFromSchema(t *testing.T) {
	cases := []struct {
		name, schema, want, skip string
	}{
		{"no schema", ``, `{}`, ""},
		{"plain", `{"type":"object","properties":{"text":{"type":"string","default":"hi"}},"required":["text"]}`, `{"text":"hi"}`, ""},
		{"$ref and anyOf", `{"type":"object","$defs":{"pt":{"type":"object","properties":{"x":{"type":"integer","minimum":3}},"required":["x"]}},
			"properties":{"p":{"$ref":"#/$defs/pt"},"q":{"anyOf":[{"type":"null"},{"type":"string","enum":["a","b"]}]}},"required":["p","q"]}`,
			`{"p":{"x":3},"q":"a"}`, ""},
		{"not JSON", `{`, "", "its inputSchema does not parse"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args, skip := argsFromSchema(json.RawMessage(c.schema))
			if skip != c.skip {
				t.Fatalf("skipped %q, want %q", skip, c.skip)
			}
			if c.skip != "" {
				return
			}
			var got, want any
			if err := json.Unmarshal(args, &got); err != nil {
				t.Fatalf("args %s: %v", args, err)
			}
			_ = json.Unmarshal([]byte(c.want), &want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
		})
	}
}
