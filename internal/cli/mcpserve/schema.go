package mcpserve

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// bound is the range of a numeric input and its default.
type bound struct {
	min, max, def float64
}

// inputSchema is In's JSON Schema made strict: no property but those of In
// (additionalProperties false), the fields without omitempty required, each bounded field
// given its minimum, maximum and default, and every string that is not free text non-empty.
func inputSchema[In any](bounds map[string]bound) (*jsonschema.Schema, error) {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		return nil, err
	}
	s.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
	for name, b := range bounds {
		p, ok := s.Properties[name]
		if !ok {
			return nil, fmt.Errorf("bound of unknown property %q", name)
		}
		lo, hi := b.min, b.max
		p.Minimum, p.Maximum = &lo, &hi
		def, err := json.Marshal(b.def)
		if err != nil {
			return nil, err
		}
		p.Default = def
	}
	one := 1
	for _, p := range s.Properties {
		if p.Type == "string" && p.MinLength == nil {
			p.MinLength = &one
		}
	}
	return s, nil
}

// outputSchema is Out's JSON Schema with additionalProperties false.
func outputSchema[Out any]() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[Out](nil)
	if err != nil {
		return nil, err
	}
	s.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
	return s, nil
}
