package docsgen

import (
	"encoding/json"
	"strings"
)

// exampleCall synthesises the arguments of a call from the input schema: every required
// property (all of them when none is required), each from its examples, default, const or
// first enum value, else a placeholder of its type and format that meets its bounds. It
// returns the tools/call params as indented JSON.
func exampleCall(name string, raw json.RawMessage) string {
	args := map[string]any{}
	var root schema
	if len(raw) > 0 && json.Unmarshal(raw, &root) == nil {
		if v, ok := exampleValue(&root, &root, "", 0).(map[string]any); ok {
			args = v
		}
	}
	return marshalIndent(struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}{name, args})
}

// ExampleArguments returns example arguments for a tool's input schema, as exampleCall
// builds them (an empty object when the schema has no properties or does not decode).
func ExampleArguments(raw json.RawMessage) map[string]any {
	var root schema
	if len(raw) == 0 || json.Unmarshal(raw, &root) != nil {
		return map[string]any{}
	}
	if v, ok := exampleValue(&root, &root, "", 0).(map[string]any); ok {
		return v
	}
	return map[string]any{}
}

func exampleValue(root, s *schema, name string, depth int) any {
	s = resolve(root, s, 0)
	if s == nil {
		return "example"
	}
	switch {
	case len(s.Examples) > 0:
		return s.Examples[0]
	case s.Default != nil:
		return *s.Default
	case s.Const != nil:
		return *s.Const
	case len(s.Enum) > 0:
		return s.Enum[0]
	}
	for _, branch := range append(append([]*schema{}, s.AnyOf...), s.OneOf...) {
		if b := resolve(root, branch, 0); b != nil && typeOf(root, b) != "null" {
			return exampleValue(root, b, name, depth)
		}
	}
	t := typeOf(root, &schema{Type: s.Type})
	t, _, _ = strings.Cut(t, " | ")
	if t == "any" && len(s.Properties) > 0 {
		t = "object"
	}
	switch t {
	case "object":
		obj := map[string]any{}
		if depth >= maxDepth {
			return obj
		}
		keys := s.Required
		if len(keys) == 0 && depth == 0 {
			for k := range s.Properties {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			obj[k] = exampleValue(root, s.Properties[k], k, depth+1)
		}
		return obj
	case "array":
		n := 1
		if s.MinItems != nil && *s.MinItems > 1 {
			n = min(*s.MinItems, 3)
		}
		items := make([]any, 0, n)
		if depth < maxDepth {
			for range n {
				items = append(items, exampleValue(root, s.Items, name, depth+1))
			}
		}
		return items
	case "integer", "number":
		v := 1.0
		if s.Minimum != nil {
			v = *s.Minimum
		} else if m, ok := s.ExclusiveMinimum.(float64); ok {
			v = m + 1
		}
		if s.Maximum != nil && v > *s.Maximum {
			v = *s.Maximum
		}
		if t == "integer" {
			return int64(v)
		}
		return v
	case "boolean":
		return true
	case "null":
		return nil
	}
	return stringExample(s, name)
}

func stringExample(s *schema, name string) string {
	var v string
	switch s.Format {
	case "date-time":
		v = "2025-01-01T00:00:00Z"
	case "date":
		v = "2025-01-01"
	case "time":
		v = "12:00:00Z"
	case "uri", "url", "iri":
		v = "https://example.com/"
	case "email":
		v = "user@example.com"
	case "uuid":
		v = "123e4567-e89b-12d3-a456-426614174000"
	default:
		v = "example"
		if name != "" {
			v = name
		}
	}
	if s.MinLength != nil && len(v) < *s.MinLength {
		v += strings.Repeat("x", *s.MinLength-len(v))
	}
	if s.MaxLength != nil && *s.MaxLength >= 0 && len(v) > *s.MaxLength {
		v = v[:*s.MaxLength]
	}
	return v
}
