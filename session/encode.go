package session

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// This file encodes outgoing frames by appending bytes. Common Go values (strings, numbers,
// bools, maps and slices of them, json.RawMessage) take a reflection-free path; anything else
// goes through encoding/json.

// appendFloat appends f the way encoding/json does.
func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, fmt.Errorf("json: unsupported value %v", f)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

// appendValue appends v as JSON. A nil v appends null.
func appendValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case json.RawMessage:
		if x == nil {
			return append(b, "null"...), nil
		}
		return append(b, x...), nil
	case string:
		return appendString(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case float64:
		return appendFloat(b, x)
	case map[string]any:
		if x == nil {
			return append(b, "null"...), nil
		}
		return appendMap(b, x)
	case map[string]string:
		if x == nil {
			return append(b, "null"...), nil
		}
		keys := sortedKeys(x)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = appendString(b, x[k])
		}
		return append(b, '}'), nil
	case []any:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendValue(b, e); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case []string:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, e)
		}
		return append(b, ']'), nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, raw...), nil
}

func appendMap(b []byte, m map[string]any) ([]byte, error) {
	b = append(b, '{')
	if len(m) == 1 {
		for k, v := range m {
			b = appendString(b, k)
			b = append(b, ':')
			var err error
			if b, err = appendValue(b, v); err != nil {
				return b, err
			}
		}
		return append(b, '}'), nil
	}
	for i, k := range sortedKeys(m) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = appendValue(b, m[k]); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// appendRequestHead appends `{"jsonrpc":"2.0","id":<id>,"method":<method>` (no closing brace).
func appendRequestHead(b []byte, id int64, method string) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":`...)
	return appendString(b, method)
}
