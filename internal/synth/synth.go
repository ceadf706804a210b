// Package synth makes up tool arguments from a tool's inputSchema: the smallest plausible
// object that satisfies the schema's required properties, for a detector that calls every
// tool of a server it knows nothing about. It prefers what the schema suggests (const, enum,
// default, examples) and stays within its bounds (minimum, minLength, minItems …).
//
// It is a best effort: a pattern or a format it cannot honour gives a plain value, and the
// server may answer with a tool error, which a detector treats as an answer like any other.
package synth

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// maxDepth bounds the nesting of made-up values (recursive schemas end there); maxNodes the
// number of values made for one call, so that wide recursive schemas cannot blow up.
const (
	maxDepth = 8
	maxNodes = 2000
)

// Word is the string a free-form string property gets.
const Word = "mcpspec"

// Args returns arguments for a tool whose inputSchema is raw (JSON). A missing, empty or
// unreadable schema gives an empty object; so does a schema that is not an object schema.
func Args(raw json.RawMessage) map[string]any {
	var doc any
	if len(raw) == 0 || json.Unmarshal(raw, &doc) != nil {
		return map[string]any{}
	}
	root, _ := doc.(map[string]any)
	g := &gen{root: root}
	v, ok := g.value(root, 0).(map[string]any)
	if !ok || v == nil {
		return map[string]any{}
	}
	return v
}

// gen holds the root schema, against which local $refs resolve, and counts the values made.
type gen struct {
	root  map[string]any
	nodes int
}

// value makes up a value for schema s.
func (g *gen) value(s map[string]any, depth int) any {
	if s == nil || depth > maxDepth || g.nodes >= maxNodes {
		return nil
	}
	g.nodes++
	if ref, ok := s["$ref"].(string); ok {
		if t := g.resolve(ref); t != nil {
			return g.value(t, depth+1)
		}
		return nil
	}
	if v, ok := s["const"]; ok {
		return v
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	if v, ok := s["default"]; ok {
		return v
	}
	if ex, ok := s["examples"].([]any); ok && len(ex) > 0 {
		return ex[0]
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if branches, ok := s[k].([]any); ok && len(branches) > 0 {
			return g.value(pickBranch(branches), depth+1)
		}
	}
	if all, ok := s["allOf"].([]any); ok && len(all) > 0 {
		return g.value(merge(all), depth+1)
	}
	switch typeOf(s) {
	case "object":
		return g.object(s, depth)
	case "array":
		return g.array(s, depth)
	case "string":
		return str(s)
	case "integer":
		return integer(s)
	case "number":
		return number(s)
	case "boolean":
		return false
	case "null":
		return nil
	}
	return nil
}

// object fills the required properties (and no others).
func (g *gen) object(s map[string]any, depth int) map[string]any {
	out := map[string]any{}
	props, _ := s["properties"].(map[string]any)
	for _, r := range required(s) {
		ps, _ := props[r].(map[string]any)
		if ps == nil {
			out[r] = Word
			continue
		}
		out[r] = g.value(ps, depth+1)
	}
	return out
}

// array makes minItems elements (none when minItems is 0 or absent).
func (g *gen) array(s map[string]any, depth int) []any {
	n := int(num(s, "minItems", 0))
	n = min(max(n, 0), 16)
	out := make([]any, 0, n)
	items, _ := s["items"].(map[string]any)
	for i := range n {
		v := g.value(items, depth+1)
		if sv, ok := v.(string); ok && n > 1 {
			// uniqueItems: vary the strings.
			v = fmt.Sprintf("%s%d", sv, i+1)
		}
		out = append(out, v)
	}
	return out
}

// resolve follows a local reference (#/$defs/x, #/definitions/x, any JSON pointer).
func (g *gen) resolve(ref string) map[string]any {
	if !strings.HasPrefix(ref, "#") {
		return nil
	}
	var cur any = g.root
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#"), "/") {
		if part == "" {
			continue
		}
		part = strings.NewReplacer("~1", "/", "~0", "~").Replace(part)
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	m, _ := cur.(map[string]any)
	return m
}

// typeOf returns the schema's type: the first non-null one of a list, or a type implied by
// the keywords present.
func typeOf(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if x, ok := x.(string); ok && x != "null" {
				return x
			}
		}
		if len(t) > 0 {
			return "null"
		}
	}
	switch {
	case s["properties"] != nil || s["required"] != nil:
		return "object"
	case s["items"] != nil:
		return "array"
	case s["minLength"] != nil || s["pattern"] != nil || s["format"] != nil:
		return "string"
	case s["minimum"] != nil || s["maximum"] != nil:
		return "number"
	}
	return ""
}

// pickBranch prefers a branch that is not the null type.
func pickBranch(branches []any) map[string]any {
	for _, b := range branches {
		if m, ok := b.(map[string]any); ok && m["type"] != "null" {
			return m
		}
	}
	m, _ := branches[0].(map[string]any)
	return m
}

// merge combines allOf branches: properties and required lists are united, other keywords
// taken from the first branch that has them.
func merge(all []any) map[string]any {
	out := map[string]any{}
	props := map[string]any{}
	var req []any
	for _, b := range all {
		m, ok := b.(map[string]any)
		if !ok {
			continue
		}
		for k, v := range m {
			switch k {
			case "properties":
				if pm, ok := v.(map[string]any); ok {
					for pk, pv := range pm {
						props[pk] = pv
					}
				}
			case "required":
				if r, ok := v.([]any); ok {
					req = append(req, r...)
				}
			default:
				if _, has := out[k]; !has {
					out[k] = v
				}
			}
		}
	}
	if len(props) > 0 {
		out["properties"] = props
	}
	if len(req) > 0 {
		out["required"] = req
	}
	return out
}

// required lists the required property names, sorted, without duplicates.
func required(s map[string]any) []string {
	r, _ := s["required"].([]any)
	seen := map[string]bool{}
	var out []string
	for _, x := range r {
		if name, ok := x.(string); ok && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// str makes a string within minLength/maxLength, shaped by a well-known format.
func str(s map[string]any) string {
	v := Word
	switch s["format"] {
	case "date-time":
		v = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC).Format(time.RFC3339)
	case "date":
		v = "2024-01-02"
	case "time":
		v = "03:04:05Z"
	case "email":
		v = "mcpspec@example.com"
	case "uri", "url", "iri":
		v = "https://example.com/mcpspec"
	case "uri-reference", "iri-reference":
		v = "mcpspec"
	case "uuid":
		v = "00000000-0000-4000-8000-000000000000"
	case "hostname":
		v = "example.com"
	case "ipv4":
		v = "127.0.0.1"
	case "ipv6":
		v = "::1"
	}
	lo := int(num(s, "minLength", 0))
	for len(v) < lo && len(v) < 4096 {
		v += "x"
	}
	if hi, ok := s["maxLength"].(float64); ok && hi >= 0 && len(v) > int(hi) {
		v = v[:int(hi)]
	}
	return v
}

// integer makes the smallest allowed integer at or above 0 (or the maximum, when 0 is above it).
func integer(s map[string]any) int64 {
	lo, hi := bounds(s)
	v := math.Max(0, math.Ceil(lo))
	if m, ok := s["multipleOf"].(float64); ok && m > 0 {
		v = math.Ceil(v/m) * m
	}
	if v > hi {
		v = math.Floor(hi)
	}
	return int64(v)
}

// number makes the smallest allowed number at or above 0 (or the maximum, when 0 is above it).
func number(s map[string]any) float64 {
	lo, hi := bounds(s)
	v := math.Max(0, lo)
	if m, ok := s["multipleOf"].(float64); ok && m > 0 {
		v = math.Ceil(v/m) * m
	}
	if v > hi {
		v = hi
	}
	return v
}

// bounds returns the inclusive range a number schema allows (exclusive bounds stepped by 1,
// the draft-4 boolean form included).
func bounds(s map[string]any) (lo, hi float64) {
	lo, hi = math.Inf(-1), math.Inf(1)
	if v, ok := s["minimum"].(float64); ok {
		lo = v
		if s["exclusiveMinimum"] == true {
			lo = v + 1
		}
	}
	if v, ok := s["exclusiveMinimum"].(float64); ok {
		lo = math.Max(lo, v+1)
	}
	if v, ok := s["maximum"].(float64); ok {
		hi = v
		if s["exclusiveMaximum"] == true {
			hi = v - 1
		}
	}
	if v, ok := s["exclusiveMaximum"].(float64); ok {
		hi = math.Min(hi, v-1)
	}
	return lo, hi
}

// num reads a numeric keyword, or def.
func num(s map[string]any, k string, def float64) float64 {
	if v, ok := s[k].(float64); ok {
		return v
	}
	return def
}
