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

// effect is what a change does to the set of values a schema accepts, independent of direction.
type effect int

const (
	neutral effect = iota // an annotation, or a change the classifier deems harmless either way
	tighten               // rejects values the old schema accepted: breaking for input
	loosen                // accepts values the old schema rejected: breaking for output
	changed               // breaking either way (a property removed, a type replaced …)
	review                // not analysed: reported, never labelled breaking
)

// reviewSuffix ends the What of every change the classifier could not decide.
const reviewSuffix = " (not analysed; review)"

// Limits that keep a comparison bounded whatever the schemas: recursion depth, and the total
// number of node comparisons (dry runs included) for one schema pair.
const (
	maxDepth    = 64
	maxBudget   = 20000
	maxBranches = 64
	maxRefHops  = 32
)

// diffTool classifies every difference between two versions of one tool:
//
//   - breaking for input: a required property added (or a property made required), a property
//     removed, a type changed other than widened, an enum narrowed, additional properties newly
//     rejected, a constraint tightened (minimum/maxLength … or a pattern/format added), an anyOf
//     or oneOf branch removed whose values no other branch accepts;
//   - breaking for output: the output schema or a property removed, a property no longer
//     required, a type changed other than narrowed, an enum widened, a constraint loosened, a
//     union branch added whose values no old branch accepted;
//   - compatible: the opposite moves, optional properties added, descriptions;
//   - for review (never breaking, marked "(not analysed; review)"): what the classifier cannot
//     decide soundly — remote or unresolvable $ref, allOf over non-object branches, overlapping
//     oneOf branches, keywords it does not analyse (not, if/then/else, title, default …).
//
// Local $ref (#, #/$defs/…, #/definitions/…, any JSON pointer) are resolved on each side before
// comparing; recursive schemas are compared once per pair of definitions. The nullable forms
// type: [T, "null"] and anyOf: [{type: T}, {type: "null"}] are the same schema.
func diffTool(b, c result.Tool) []SchemaChange {
	var out []SchemaChange
	if b.Description != c.Description {
		out = append(out, SchemaChange{Where: "description", Path: "(tool)", What: "description changed"})
	}
	out = append(out, diffSchema(input, b.InputSchema, c.InputSchema)...)
	out = append(out, diffSchema(output, b.OutputSchema, c.OutputSchema)...)
	return out
}

// change is a SchemaChange with its direction-free effect (dry runs need the effect).
type change struct {
	eff effect
	SchemaChange
}

// diffState is shared by a comparison and every dry run inside it.
type diffState struct {
	budget int
	// active holds the pairs of nodes reached through a $ref whose comparison is in progress:
	// meeting one again means the schema is recursive, and the pair is taken as equal there
	// (its differences are reported where it was first met).
	active map[[2]uintptr]bool
	// embedded says a side embeds other resources ($id below the root), so its local $ref
	// may resolve against another base; those are left for review.
	embedded [2]bool
}

type differ struct {
	dir   direction
	where string
	// roots are the documents $ref resolve in: [0] the old schema, [1] the new (swapped in the
	// dry runs that ask whether a new branch is covered by an old one).
	roots [2]map[string]any
	st    *diffState
	depth int
	// stopped is set once a limit was reported, so one comparison reports it once.
	stopped bool
	out     []change
}

func (d *differ) rec(eff effect, path, format string, args ...any) {
	if path == "" {
		path = "(root)"
	}
	breaking := eff == changed || eff == tighten && d.dir == input || eff == loosen && d.dir == output
	what := fmt.Sprintf(format, args...)
	if eff == review {
		what += reviewSuffix
	}
	d.out = append(d.out, change{eff, SchemaChange{Breaking: breaking, Where: d.where, Path: path, What: what}})
}

// tighten records a change that rejects values the old schema accepted: breaking for input.
func (d *differ) tighten(path, format string, args ...any) { d.rec(tighten, path, format, args...) }

// loosen records a change that accepts values the old schema rejected: breaking for output.
func (d *differ) loosen(path, format string, args ...any) { d.rec(loosen, path, format, args...) }

// review records a change the classifier cannot decide; reason says why, precisely.
func (d *differ) review(path, format string, args ...any) { d.rec(review, path, format, args...) }

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
		d.rec(neutral, "", "output schema added")
		return d.result()
	case dir == output && blank(b):
		d.rec(changed, "", "output schema removed: structured content is no longer declared")
		return d.result()
	}
	av, errA := decodeSchema(a)
	bv, errB := decodeSchema(b)
	if errA != nil || errB != nil {
		var ca, cb bytes.Buffer
		if json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes()) {
			return nil
		}
		d.rec(changed, "", "schema is not a JSON object; the change cannot be classified")
		return d.result()
	}
	d.roots = [2]map[string]any{av, bv}
	d.st = &diffState{budget: maxBudget, active: map[[2]uintptr]bool{},
		embedded: [2]bool{embedsResources(av, true, 0), embedsResources(bv, true, 0)}}
	d.node("", av, bv)
	return d.result()
}

func (d *differ) result() []SchemaChange {
	if len(d.out) == 0 {
		return nil
	}
	out := make([]SchemaChange, len(d.out))
	for i, c := range d.out {
		out[i] = c.SchemaChange
	}
	return out
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

// handledKeywords are the keywords node analyses itself; every other keyword change is reported
// for review.
var handledKeywords = map[string]bool{
	"description": true, "type": true, "enum": true, "const": true, "properties": true, "required": true,
	"items": true, "additionalProperties": true, "pattern": true, "format": true,
	"minimum": true, "exclusiveMinimum": true, "minLength": true, "minItems": true, "minProperties": true,
	"maximum": true, "exclusiveMaximum": true, "maxLength": true, "maxItems": true, "maxProperties": true,
	// Resolved or analysed structurally: $ref before comparing, $defs through the $ref that use
	// them, the combinators in node and union.
	"$ref": true, "$defs": true, "definitions": true, "anyOf": true, "oneOf": true, "allOf": true,
	// Annotations, compared by annotations.
	"title": true, "examples": true, "$comment": true, "deprecated": true, "readOnly": true, "writeOnly": true,
}

// enter accounts for one node comparison; false when a limit stops the comparison here.
func (d *differ) enter(path string) bool {
	d.st.budget--
	switch {
	case d.st.budget < 0:
		if !d.stopped {
			d.stopped = true
			d.review(path, "the schemas are too large to compare fully (over %d comparisons)", maxBudget)
		}
		return false
	case d.depth >= maxDepth:
		if !d.stopped {
			d.stopped = true
			d.review(path, "schema nested deeper than %d levels", maxDepth)
		}
		return false
	}
	d.depth++
	return true
}

func (d *differ) node(path string, a, b map[string]any) {
	if !d.enter(path) {
		return
	}
	defer func() { d.depth-- }()
	na, nb := d.norm(0, a, 0), d.norm(1, b, 0)
	if na.via != 0 || nb.via != 0 {
		key := [2]uintptr{na.ident(a), nb.ident(b)}
		if d.st.active[key] {
			return
		}
		d.st.active[key] = true
		defer delete(d.st.active, key)
	}
	if na.reason != "" || nb.reason != "" {
		if !d.same(a, b) {
			d.review(path, "%s", joinReasons(na.reason, nb.reason))
		}
		return
	}
	a, b = na.m, nb.m
	if unionKind(a) != "" || unionKind(b) != "" {
		d.union(path, a, b)
		return
	}
	_, okA := a["allOf"]
	_, okB := b["allOf"]
	if okA || okB {
		if !d.same(a["allOf"], b["allOf"]) {
			d.review(path, "allOf changed: its branches are not all plain object schemas, so they were not merged")
			return
		}
	}
	d.annotations(path, a, b)
	d.types(path, a, b)
	d.enum(path, a, b)
	d.properties(path, a, b)
	d.items(path, a, b)
	if d.dir == input {
		closedA, closedB := a["additionalProperties"] == false, b["additionalProperties"] == false
		switch {
		case !closedA && closedB:
			d.tighten(path, "additional properties are now rejected")
		case closedA && !closedB:
			d.loosen(path, "additional properties are now accepted")
		case !closedA && !closedB && (asMap(a["additionalProperties"]) != nil || asMap(b["additionalProperties"]) != nil) &&
			!d.same(a["additionalProperties"], b["additionalProperties"]):
			d.review(path, "additionalProperties schema changed")
		}
	}
	d.constraints(path, a, b)
	d.mixedUnions(path, a, b)
	d.otherKeywords(path, a, b, func(k string) bool {
		return handledKeywords[k] || (k == "additionalProperties" && d.dir == output)
	})
}

// neutralAnnotations never change what is accepted nor what a value means to the server;
// default is not among them (a changed default changes what an omitted argument does).
var neutralAnnotations = []string{"description", "title", "examples", "$comment", "deprecated", "readOnly", "writeOnly"}

// annotations reports changed annotations as compatible.
func (d *differ) annotations(path string, a, b map[string]any) {
	for _, k := range neutralAnnotations {
		if !reflect.DeepEqual(a[k], b[k]) {
			d.rec(neutral, path, "%s changed", k)
		}
	}
}

// otherKeywords reports, for review, a change in any keyword skip does not cover.
func (d *differ) otherKeywords(path string, a, b map[string]any, skip func(string) bool) {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if skip(k) {
			continue
		}
		va, okA := a[k]
		vb, okB := b[k]
		if okA != okB || !d.same(va, vb) {
			d.review(path, "%s changed", k)
		}
	}
}

// items compares array item schemas; a missing or `true` items is the empty schema.
func (d *differ) items(path string, a, b map[string]any) {
	ia, ib := schemaOrEmpty(a["items"]), schemaOrEmpty(b["items"])
	if ia != nil && ib != nil {
		if len(ia) == 0 && len(ib) == 0 {
			return
		}
		d.node(path+"[]", ia, ib)
	} else if !d.same(a["items"], b["items"]) {
		d.review(path, "items changed")
	}
}

// schemaOrEmpty returns v as a schema object, with absent and `true` as the empty schema; nil
// for anything else (false, the array form of items …).
func schemaOrEmpty(v any) map[string]any {
	switch s := v.(type) {
	case nil:
		return map[string]any{}
	case bool:
		if s {
			return map[string]any{}
		}
	case map[string]any:
		return s
	}
	return nil
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
		d.rec(changed, path, "type changed from %s to %s", typeName(ta), typeName(tb))
	}
}

// enumSet returns the allowed values by canonical JSON (enum, const, or both intersected), nil
// when neither keyword is present.
func enumSet(s map[string]any) map[string]bool {
	var m map[string]bool
	if vs, ok := s["enum"].([]any); ok {
		m = map[string]bool{}
		for _, v := range vs {
			b, _ := json.Marshal(v)
			m[string(b)] = true
		}
	}
	if c, ok := s["const"]; ok {
		b, _ := json.Marshal(c)
		k := string(b)
		if m != nil && !m[k] {
			return map[string]bool{}
		}
		m = map[string]bool{k: true}
	}
	return m
}

func (d *differ) enum(path string, a, b map[string]any) {
	ea, eb := enumSet(a), enumSet(b)
	if ea == nil && eb == nil {
		return
	}
	noun := "enum"
	if _, ok := a["enum"]; !ok {
		if _, ok := b["enum"]; !ok {
			noun = "const"
		}
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
		d.tighten(path, "%s introduced: only %s allowed", noun, strings.Join(slices.Sorted(maps.Keys(eb)), ", "))
	case eb == nil:
		d.loosen(path, "%s removed: any value allowed", noun)
	default:
		if removed := diff(ea, eb); len(removed) > 0 {
			d.tighten(path, "%s narrowed: %s removed", noun, strings.Join(removed, ", "))
		}
		if added := diff(eb, ea); len(added) > 0 {
			d.loosen(path, "%s widened: %s added", noun, strings.Join(added, ", "))
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
				d.rec(neutral, p, "property added")
			case rb[n]:
				d.tighten(p, "required property added")
			default:
				d.rec(neutral, p, "optional property added")
			}
		case inA && !inB:
			d.rec(changed, p, "property removed")
		default:
			if ca, cb := schemaOrEmpty(pa[n]), schemaOrEmpty(pb[n]); ca != nil && cb != nil {
				d.node(p, ca, cb)
			} else if !d.same(pa[n], pb[n]) {
				d.review(p, "property schema changed")
			}
			switch {
			case !ra[n] && rb[n]:
				if d.dir == output {
					d.tighten(p, "property is now always present")
				} else {
					d.tighten(p, "property became required")
				}
			case ra[n] && !rb[n]:
				if d.dir == output {
					d.loosen(p, "property is no longer guaranteed (was required)")
				} else {
					d.loosen(p, "property became optional")
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
