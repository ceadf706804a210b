package baseline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/mcpspec/mcpspec/result"
)

// direction says whose values a schema constrains: the client's (input: arguments the client
// sends) or the server's (output: structured content the client receives). A change that
// rejects values clients send is breaking for input; a change that lets the server return
// values clients did not expect is breaking for output.
type direction int

const (
	input direction = iota
	output
)

// diffTool classifies every difference between two versions of one tool:
//
//   - breaking for input: a required property added (or a property made required), a property
//     removed, a type changed other than widened, an enum narrowed, additional properties newly
//     rejected, a constraint tightened (minimum/maxLength … or a pattern/format added);
//   - breaking for output: the output schema or a property removed, a property no longer
//     required, a type changed other than narrowed, an enum widened, a constraint loosened;
//   - compatible: the opposite moves, optional properties added, descriptions, titles, examples
//     and keywords this classifier does not analyse (anyOf, $ref …, reported for review).
func diffTool(b, c result.Tool) []SchemaChange {
	var out []SchemaChange
	if b.Description != c.Description {
		out = append(out, SchemaChange{Where: "description", Path: "(tool)", What: "description changed"})
	}
	out = append(out, diffSchema(input, b.InputSchema, c.InputSchema)...)
	out = append(out, diffSchema(output, b.OutputSchema, c.OutputSchema)...)
	return out
}

type differ struct {
	dir   direction
	where string
	out   []SchemaChange
}

func (d *differ) add(breaking bool, path, format string, args ...any) {
	if path == "" {
		path = "(root)"
	}
	d.out = append(d.out, SchemaChange{Breaking: breaking, Where: d.where, Path: path, What: fmt.Sprintf(format, args...)})
}

// tighten records a change that rejects values the old schema accepted: breaking for input.
func (d *differ) tighten(path, format string, args ...any) {
	d.add(d.dir == input, path, format, args...)
}

// loosen records a change that accepts values the old schema rejected: breaking for output.
func (d *differ) loosen(path, format string, args ...any) {
	d.add(d.dir == output, path, format, args...)
}

func blank(r json.RawMessage) bool {
	t := bytes.TrimSpace(r)
	return len(t) == 0 || string(t) == "null"
}

func diffSchema(dir direction, a, b json.RawMessage) []SchemaChange {
	d := &differ{dir: dir, where: "input"}
	if dir == output {
		d.where = "output"
	}
	switch {
	case blank(a) && blank(b):
		return nil
	case dir == output && blank(a):
		d.add(false, "", "output schema added")
		return d.out
	case dir == output && blank(b):
		d.add(true, "", "output schema removed: structured content is no longer declared")
		return d.out
	}
	av, errA := decodeSchema(a)
	bv, errB := decodeSchema(b)
	if errA != nil || errB != nil {
		var ca, cb bytes.Buffer
		if json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes()) {
			return nil
		}
		d.add(true, "", "schema is not a JSON object; the change cannot be classified")
		return d.out
	}
	d.node("", av, bv)
	return d.out
}

// decodeSchema parses a schema; blank and `true` mean the empty schema (anything goes).
func decodeSchema(r json.RawMessage) (map[string]any, error) {
	if blank(r) {
		return map[string]any{}, nil
	}
	var v any
	if err := json.Unmarshal(r, &v); err != nil {
		return nil, err
	}
	switch s := v.(type) {
	case map[string]any:
		return s, nil
	case bool:
		if s {
			return map[string]any{}, nil
		}
	}
	return nil, fmt.Errorf("schema is %T", v)
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// handled are the keywords node analyses; every other keyword change is reported as compatible.
var handledKeywords = map[string]bool{
	"description": true, "type": true, "enum": true, "properties": true, "required": true,
	"items": true, "additionalProperties": true, "pattern": true, "format": true,
	"minimum": true, "exclusiveMinimum": true, "minLength": true, "minItems": true, "minProperties": true,
	"maximum": true, "exclusiveMaximum": true, "maxLength": true, "maxItems": true, "maxProperties": true,
}

func (d *differ) node(path string, a, b map[string]any) {
	if !reflect.DeepEqual(a["description"], b["description"]) {
		d.add(false, path, "description changed")
	}
	d.types(path, a, b)
	d.enum(path, a, b)
	d.properties(path, a, b)
	if ia, ib := asMap(a["items"]), asMap(b["items"]); ia != nil && ib != nil {
		d.node(path+"[]", ia, ib)
	} else if !reflect.DeepEqual(a["items"], b["items"]) {
		d.add(false, path, "items changed (not analysed; review)")
	}
	if d.dir == input {
		closedA, closedB := a["additionalProperties"] == false, b["additionalProperties"] == false
		switch {
		case !closedA && closedB:
			d.add(true, path, "additional properties are now rejected")
		case closedA && !closedB:
			d.add(false, path, "additional properties are now accepted")
		}
	}
	d.constraints(path, a, b)
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if handledKeywords[k] || (k == "additionalProperties" && d.dir == output) {
			continue
		}
		if !reflect.DeepEqual(a[k], b[k]) {
			d.add(false, path, "%s changed (not analysed; review)", k)
		}
	}
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// typeSet returns the allowed JSON types, nil meaning any.
func typeSet(s map[string]any) map[string]bool {
	switch t := s["type"].(type) {
	case string:
		return map[string]bool{t: true}
	case []any:
		m := map[string]bool{}
		for _, x := range t {
			if str, ok := x.(string); ok {
				m[str] = true
			}
		}
		return m
	}
	return nil
}

// subset reports a ⊆ b, where nil means "everything".
func subset(a, b map[string]bool) bool {
	if b == nil {
		return true
	}
	if a == nil {
		return false
	}
	for k := range a {
		if !b[k] && !(k == "integer" && b["number"]) {
			return false
		}
	}
	return true
}

func typeName(s map[string]bool) string {
	if s == nil {
		return "any"
	}
	return strings.Join(slices.Sorted(maps.Keys(s)), "|")
}

func (d *differ) types(path string, a, b map[string]any) {
	ta, tb := typeSet(a), typeSet(b)
	if subset(ta, tb) && subset(tb, ta) {
		return
	}
	switch {
	case subset(ta, tb):
		d.loosen(path, "type widened from %s to %s", typeName(ta), typeName(tb))
	case subset(tb, ta):
		d.tighten(path, "type narrowed from %s to %s", typeName(ta), typeName(tb))
	default:
		d.add(true, path, "type changed from %s to %s", typeName(ta), typeName(tb))
	}
}

// enumSet returns the enum values by canonical JSON, nil when there is no enum.
func enumSet(s map[string]any) map[string]bool {
	vs, ok := s["enum"].([]any)
	if !ok {
		return nil
	}
	m := map[string]bool{}
	for _, v := range vs {
		b, _ := json.Marshal(v)
		m[string(b)] = true
	}
	return m
}

func (d *differ) enum(path string, a, b map[string]any) {
	ea, eb := enumSet(a), enumSet(b)
	if ea == nil && eb == nil {
		return
	}
	diff := func(x, y map[string]bool) []string {
		var out []string
		for k := range x {
			if !y[k] {
				out = append(out, k)
			}
		}
		sort.Strings(out)
		return out
	}
	switch {
	case ea == nil:
		d.tighten(path, "enum introduced: only %s allowed", strings.Join(slices.Sorted(maps.Keys(eb)), ", "))
	case eb == nil:
		d.loosen(path, "enum removed: any value allowed")
	default:
		if removed := diff(ea, eb); len(removed) > 0 {
			d.tighten(path, "enum narrowed: %s removed", strings.Join(removed, ", "))
		}
		if added := diff(eb, ea); len(added) > 0 {
			d.loosen(path, "enum widened: %s added", strings.Join(added, ", "))
		}
	}
}

func requiredSet(s map[string]any) map[string]bool {
	m := map[string]bool{}
	if rs, ok := s["required"].([]any); ok {
		for _, r := range rs {
			if str, ok := r.(string); ok {
				m[str] = true
			}
		}
	}
	return m
}

func (d *differ) properties(path string, a, b map[string]any) {
	pa, pb := asMap(a["properties"]), asMap(b["properties"])
	ra, rb := requiredSet(a), requiredSet(b)
	names := map[string]bool{}
	for _, m := range []map[string]any{pa, pb} {
		for k := range m {
			names[k] = true
		}
	}
	for _, m := range []map[string]bool{ra, rb} {
		for k := range m {
			names[k] = true
		}
	}
	for _, n := range slices.Sorted(maps.Keys(names)) {
		p := join(path, n)
		_, inA := pa[n]
		_, inB := pb[n]
		inA, inB = inA || ra[n], inB || rb[n]
		switch {
		case !inA && inB:
			switch {
			case d.dir == output:
				d.add(false, p, "property added")
			case rb[n]:
				d.add(true, p, "required property added")
			default:
				d.add(false, p, "optional property added")
			}
		case inA && !inB:
			d.add(true, p, "property removed")
		default:
			if ca, cb := asMap(pa[n]), asMap(pb[n]); ca != nil && cb != nil {
				d.node(p, ca, cb)
			} else if !reflect.DeepEqual(pa[n], pb[n]) {
				d.add(false, p, "property schema changed (not analysed; review)")
			}
			switch {
			case !ra[n] && rb[n]:
				d.tighten(p, "property became required")
				if d.dir == output {
					d.out[len(d.out)-1].What = "property is now always present"
				}
			case ra[n] && !rb[n]:
				d.loosen(p, "property became optional")
				if d.dir == output {
					d.out[len(d.out)-1].What = "property is no longer guaranteed (was required)"
				}
			}
		}
	}
}

// constraints compares the numeric bounds and string restrictions.
func (d *differ) constraints(path string, a, b map[string]any) {
	lower := []string{"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"}
	upper := []string{"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"}
	num := func(s map[string]any, k string) (float64, bool) {
		f, ok := s[k].(float64)
		return f, ok
	}
	for i, keys := range [][]string{lower, upper} {
		for _, k := range keys {
			va, okA := num(a, k)
			vb, okB := num(b, k)
			if okA == okB && va == vb {
				continue
			}
			tighter := (!okA && okB) || (okA && okB && (i == 0 && vb > va || i == 1 && vb < va))
			desc := fmt.Sprintf("%s %s → %s", k, numText(va, okA), numText(vb, okB))
			if tighter {
				d.tighten(path, "%s tightened", desc)
			} else {
				d.loosen(path, "%s loosened", desc)
			}
		}
	}
	for _, k := range []string{"pattern", "format"} {
		sa, okA := a[k].(string)
		sb, okB := b[k].(string)
		switch {
		case okA == okB && sa == sb:
		case okB:
			d.tighten(path, "%s %q → %q", k, sa, sb)
		default:
			d.loosen(path, "%s %q removed", k, sa)
		}
	}
}

func numText(v float64, ok bool) string {
	if !ok {
		return "none"
	}
	return fmt.Sprint(v)
}
