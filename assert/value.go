package assert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"unicode/utf8"
)

// Excerpt limits: a failure carries at most this many bytes of a value or of the response.
const (
	maxActual   = 256
	maxResponse = 512
)

// Normalize converts a value decoded from YAML or built in Go into the shape [DecodeJSON] yields:
// every number becomes float64, maps become map[string]any, slices []any. Values that cannot be
// represented in JSON are returned as their fmt string.
func Normalize(v any) any {
	switch x := v.(type) {
	case nil, bool, string, float64:
		return x
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return f
		}
		return x.String()
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Normalize(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Normalize(e)
		}
		return out
	}
	if f, ok := toFloat(v); ok {
		return f
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = Normalize(rv.Index(i).Interface())
		}
		return out
	case reflect.Map:
		out := make(map[string]any, rv.Len())
		iter := rv.MapRange()
		for iter.Next() {
			out[fmt.Sprint(iter.Key().Interface())] = Normalize(iter.Value().Interface())
		}
		return out
	case reflect.String:
		return rv.String()
	case reflect.Bool:
		return rv.Bool()
	}
	return fmt.Sprint(v)
}

// toFloat converts any Go number to float64.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint8:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// Equal reports whether a and b are the same JSON value: numbers compare numerically whatever
// their Go type, maps and slices deeply.
func Equal(a, b any) bool {
	return reflect.DeepEqual(Normalize(a), Normalize(b))
}

// TypeName returns the JSON type of v: "null", "boolean", "number", "string", "array" or
// "object". Integral numbers are still "number"; see [isInteger].
func TypeName(v any) string {
	switch x := Normalize(v).(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		_ = x
		return "unknown"
	}
}

// isInteger reports whether v is a number with no fractional part.
func isInteger(v any) bool {
	f, ok := toFloat(v)
	return ok && !math.IsInf(f, 0) && f == math.Trunc(f)
}

// CanonicalJSON renders v as compact JSON with object keys sorted (encoding/json sorts map keys)
// and numbers in their shortest form. Unencodable values render as their fmt string.
func CanonicalJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(Normalize(v)); err != nil {
		return fmt.Sprint(v)
	}
	return string(bytes.TrimRight(buf.Bytes(), "\n"))
}

// indentJSON renders v as indented canonical JSON (for snapshot files).
func indentJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(Normalize(v)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Excerpt renders v as canonical JSON cut to at most n bytes (on a rune boundary), marking the cut.
func Excerpt(v any, n int) string {
	return truncate(CanonicalJSON(v), n)
}

// truncate cuts s to at most n bytes on a rune boundary, appending "…" when it cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// ToString renders a scalar the way a template substitution does: strings as is, integral numbers
// without exponent or fraction, other values as canonical JSON.
func ToString(v any) string {
	switch x := Normalize(v).(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return "null"
	default:
		return CanonicalJSON(x)
	}
}

// lengthOf returns the length of a string (in runes), an array or an object.
func lengthOf(v any) (int, bool) {
	switch x := Normalize(v).(type) {
	case string:
		return utf8.RuneCountInString(x), true
	case []any:
		return len(x), true
	case map[string]any:
		return len(x), true
	}
	return 0, false
}
