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

// Options are the values a [Maker] fills in where a schema suggests none. The zero value (or
// nil) is what [Args] uses.
type Options struct {
	// Word is the string a free-form string gets; "" means [Word].
	Word string
	// Number is the number made where the bounds allow it (0 by default).
	Number float64
	// MinItems is the fewest items an array gets when its schema asks for fewer.
	MinItems int
	// Formats maps a string format to the sample made for it, over synth's own samples.
	Formats map[string]string
}

// Maker makes up values from the schemas of one document: local $refs resolve against its
// root. It is the one place arguments are made from an inputSchema; a Maker is not safe for
// concurrent use.
type Maker struct {
	root  map[string]any
	opts  Options
	nodes int
}

// NewMaker returns a Maker over the schema document root (nil is allowed); o may be nil.
func NewMaker(root map[string]any, o *Options) *Maker {
	m := &Maker{root: root}
	if o != nil {
		m.opts = *o
	}
	if m.opts.Word == "" {
		m.opts.Word = Word
	}
	return m
}

// Args returns arguments for a tool whose inputSchema is raw (JSON). A missing, empty or
// unreadable schema gives an empty object; so does a schema that is not an object schema.
func Args(raw json.RawMessage) map[string]any {
	var doc any
	if len(raw) == 0 || json.Unmarshal(raw, &doc) != nil {
		return map[string]any{}
	}
	root, _ := doc.(map[string]any)
	v, ok := NewMaker(root, nil).Value(root).(map[string]any)
	if !ok || v == nil {
		return map[string]any{}
	}
	return v
}

// Value makes up a value meant to satisfy s, a schema of the Maker's document: const, enum,
// default or examples first, then a value of its type within its bounds. It returns nil where
// it can make nothing (no type, or past its depth and size budgets).
func (m *Maker) Value(s map[string]any) any {
	m.nodes = 0
	return m.value(s, 0)
}

// Resolve follows s's local $refs and picks the branch values are made from (the first
// anyOf/oneOf branch that is not null; allOf branches merged), as [Maker.Value] does; s
// itself when there is nothing to follow.
func (m *Maker) Resolve(s map[string]any) map[string]any {
	for range maxDepth {
		if ref, ok := s["$ref"].(string); ok {
			t := m.resolve(ref)
			if t == nil {
				return s
			}
			s = t
			continue
		}
		b := branchOf(s)
		if b == nil {
			return s
		}
		s = b
	}
	return s
}

// branchOf returns the branch of s's anyOf/oneOf a value is made from, or its allOf merged;
// nil when s has none.
func branchOf(s map[string]any) map[string]any {
	for _, k := range []string{"anyOf", "oneOf"} {
		if branches, ok := s[k].([]any); ok && len(branches) > 0 {
			return pickBranch(branches)
		}
	}
	if all, ok := s["allOf"].([]any); ok && len(all) > 0 {
		return merge(all)
	}
	return nil
}

// value makes up a value for schema s.
func (m *Maker) value(s map[string]any, depth int) any {
	if s == nil || depth > maxDepth || m.nodes >= maxNodes {
		return nil
	}
	m.nodes++
	if ref, ok := s["$ref"].(string); ok {
		if t := m.resolve(ref); t != nil {
			return m.value(t, depth+1)
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
	if b := branchOf(s); b != nil {
		return m.value(b, depth+1)
	}
	switch typeOf(s) {
	case "object":
		return m.object(s, depth)
	case "array":
		return m.array(s, depth)
	case "string":
		return m.str(s)
	case "integer":
		return integer(s, m.opts.Number)
	case "number":
		return number(s, m.opts.Number)
	case "boolean":
		return false
	case "null":
		return nil
	}
	return nil
}

// object fills the required properties (and no others).
func (m *Maker) object(s map[string]any, depth int) map[string]any {
	out := map[string]any{}
	props, _ := s["properties"].(map[string]any)
	for _, r := range required(s) {
		ps, _ := props[r].(map[string]any)
		if ps == nil {
			out[r] = m.opts.Word
			continue
		}
		out[r] = m.value(ps, depth+1)
	}
	return out
}

// array makes minItems elements (none when minItems is 0 or absent).
func (m *Maker) array(s map[string]any, depth int) []any {
	n := max(int(num(s, "minItems", 0)), m.opts.MinItems)
	n = min(max(n, 0), 16)
	out := make([]any, 0, n)
	items, _ := s["items"].(map[string]any)
	for i := range n {
		v := m.value(items, depth+1)
		if sv, ok := v.(string); ok && n > 1 {
			// uniqueItems: vary the strings.
			v = fmt.Sprintf("%s%d", sv, i+1)
		}
		out = append(out, v)
	}
	return out
}

// resolve follows a local reference (#/$defs/x, #/definitions/x, any JSON pointer).
func (m *Maker) resolve(ref string) map[string]any {
	if !strings.HasPrefix(ref, "#") {
		return nil
	}
	var cur any = m.root
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#"), "/") {
		if part == "" {
			continue
		}
		part = strings.NewReplacer("~1", "/", "~0", "~").Replace(part)
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = obj[part]
	}
	obj, _ := cur.(map[string]any)
	return obj
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
func (m *Maker) str(s map[string]any) string {
	v := m.opts.Word
	f, _ := s["format"].(string)
	if sample, ok := m.opts.Formats[f]; ok {
		v = sample
	} else if sample := formatSample(f); sample != "" {
		v = sample
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

// formatSample is a value of a well-known string format; "" for another format.
func formatSample(format string) string {
	switch format {
	case "date-time":
		return time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC).Format(time.RFC3339)
	case "date":
		return "2024-01-02"
	case "time":
		return "03:04:05Z"
	case "email":
		return "mcpspec@example.com"
	case "uri", "url", "iri":
		return "https://example.com/mcpspec"
	case "uri-reference", "iri-reference":
		return "mcpspec"
	case "uuid":
		return "00000000-0000-4000-8000-000000000000"
	case "hostname":
		return "example.com"
	case "ipv4":
		return "127.0.0.1"
	case "ipv6":
		return "::1"
	}
	return ""
}

// integer makes the smallest allowed integer at or above pref (or the maximum, when pref is
// above it).
func integer(s map[string]any, pref float64) int64 {
	lo, hi := bounds(s)
	v := math.Max(math.Ceil(pref), math.Ceil(lo))
	if m, ok := s["multipleOf"].(float64); ok && m > 0 {
		v = math.Ceil(v/m) * m
	}
	if v > hi {
		v = math.Floor(hi)
	}
	return int64(v)
}

// number makes the smallest allowed number at or above pref (or the maximum, when pref is
// above it).
func number(s map[string]any, pref float64) float64 {
	lo, hi := bounds(s)
	v := math.Max(pref, lo)
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
