package mcptest

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// args holds a tool call's arguments, decoded one level deep.
type args map[string]json.RawMessage

// parseArgs decodes tools/call arguments; absent or null arguments are an empty object.
func parseArgs(raw json.RawMessage) (args, error) {
	a := args{}
	if len(raw) == 0 || string(raw) == "null" {
		return a, nil
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, errors.New("arguments must be a JSON object")
	}
	return a, nil
}

// lookup returns the raw value of name, or nil when it is absent or null.
func (a args) lookup(name string, required bool) (json.RawMessage, error) {
	v, ok := a[name]
	if !ok || string(v) == "null" {
		if required {
			return nil, fmt.Errorf("missing required argument %q", name)
		}
		return nil, nil
	}
	return v, nil
}

func (a args) str(name string, required bool, def string) (string, error) {
	v, err := a.lookup(name, required)
	if v == nil || err != nil {
		return def, err
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", fmt.Errorf("argument %q must be a string", name)
	}
	return s, nil
}

func (a args) num(name string, required bool, def float64) (float64, error) {
	v, err := a.lookup(name, required)
	if v == nil || err != nil {
		return def, err
	}
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		return 0, fmt.Errorf("argument %q must be a number", name)
	}
	return f, nil
}

func (a args) integer(name string, required bool, def int64) (int64, error) {
	f, err := a.num(name, required, float64(def))
	if err != nil {
		if _, ok := a[name]; ok {
			return 0, fmt.Errorf("argument %q must be an integer", name)
		}
		return 0, err
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, fmt.Errorf("argument %q must be an integer", name)
	}
	return int64(f), nil
}

func (a args) boolean(name string, def bool) (bool, error) {
	v, err := a.lookup(name, false)
	if v == nil || err != nil {
		return def, err
	}
	var b bool
	if err := json.Unmarshal(v, &b); err != nil {
		return false, fmt.Errorf("argument %q must be a boolean", name)
	}
	return b, nil
}
