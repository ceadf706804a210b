package mutate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpspec/mcpspec/assert"
	"github.com/mcpspec/mcpspec/internal/synth"
)

// Schema cases: arguments derived from a tool's inputSchema (a valid baseline made by
// internal/synth: required properties, enum, const, default, bounds), then mutated one slot at a time — wrong types,
// missing required, extra properties, boundaries, empty and huge strings, Unicode edge cases.
// Whether the result still satisfies the schema is decided by validating it, not assumed.

// maxSlotDepth bounds how deep mutations reach into nested objects.
const maxSlotDepth = 2

// toolPlan is one tool's baseline arguments and every mutation of them, computed once.
type toolPlan struct {
	name      string
	validator *jsonschema.Schema // nil when the schema did not compile
	mutations []mutation
}

// mutation is one argument object to send, built when it is picked (huge strings are not kept
// around for every slot of every tool).
type mutation struct {
	kind, what string
	build      func() json.RawMessage
	slot       path
}

// schemaCase picks a tool and one of its mutations.
func (g *Generator) schemaCase() Case {
	t := pick(g, g.tools)
	m := pick(g, t.mutations)
	c := Case{Kind: m.kind, What: t.name + ": " + m.what, Tool: t.name, Args: m.build(), Slot: m.slot}
	c.Valid, c.ValidKnown = t.check(c.Args)
	return c
}

// check validates args against the tool's schema; known is false when it cannot tell.
func (t *toolPlan) check(args json.RawMessage) (valid, known bool) {
	if t.validator == nil {
		return false, false
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return false, false
	}
	return t.validator.Validate(v) == nil, true
}

// CheckArgs reports whether args satisfy schema; known is false when the schema does not
// compile or args are not JSON.
func CheckArgs(schema, args json.RawMessage) (valid, known bool) {
	return (&toolPlan{validator: compile(schema)}).check(args)
}

func compile(raw json.RawMessage) *jsonschema.Schema {
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil
	}
	s, err := assert.CompileSchema(doc)
	if err != nil {
		return nil
	}
	return s
}

// planTool derives the baseline and the mutations of one tool. It never fails: a schema it
// cannot read still gets the mutations that need no schema.
func planTool(t Tool) *toolPlan {
	p := &toolPlan{name: t.Name, validator: compile(t.InputSchema)}
	var root map[string]any
	_ = json.Unmarshal(t.InputSchema, &root)
	w := synth.NewMaker(root, baselineStyle())
	obj := w.Resolve(root)
	base, _ := w.Value(obj).(map[string]any)
	if base == nil {
		base = map[string]any{}
	}
	add := func(kind, what string, v any) {
		p.mutations = append(p.mutations, mutation{kind: kind, what: what, build: func() json.RawMessage { return encode(v) }})
	}
	add("baseline", "arguments derived from the schema", base)
	add("empty-arguments", "{} (every required argument missing)", map[string]any{})
	for _, raw := range []string{`null`, `[]`, `"arguments"`, `5`} {
		add("arguments-not-object", "arguments "+raw, json.RawMessage(raw))
	}
	add("extra-property", "an unknown extra property", with(base, path{"mcpspec_fuzz_extra"}, "extra"))
	if full, ok := allProperties(w, obj).(map[string]any); ok && len(full) > len(base) {
		add("all-optional", "every optional property too", full)
	}
	for _, s := range slots(w, obj, nil, 0) {
		p.mutations = append(p.mutations, slotMutations(w, s, base)...)
	}
	return p
}

// path addresses a value inside the arguments: object member names.
type path []string

func (p path) String() string { return strings.Join(p, ".") }

// slot is one property the mutations replace or remove.
type slot struct {
	at       path
	schema   map[string]any
	required bool
}

// slotMutations returns every mutation of one slot.
func slotMutations(w *synth.Maker, s slot, base map[string]any) []mutation {
	var out []mutation
	add := func(kind, what string, v func() any) {
		out = append(out, mutation{kind: kind, what: s.at.String() + ": " + what, slot: s.at,
			build: func() json.RawMessage { return encode(with(base, s.at, v())) }})
	}
	val := func(v any) func() any { return func() any { return v } }
	if s.required {
		out = append(out, mutation{kind: "missing-required", what: s.at.String() + ": missing (required)", build: func() json.RawMessage { return encode(without(base, s.at)) }})
	} else if _, present := lookup(base, s.at); !present {
		add("optional-present", "present", val(w.Value(s.schema)))
	}
	allowed := types(s.schema)
	for _, w := range wrongTypeValues() {
		if !allowed[w.typ] && !(w.typ == "integer" && allowed["number"]) {
			add("wrong-type", w.typ+" instead of "+typeList(allowed), val(w.v))
		}
	}
	if allowed["string"] || len(allowed) == 0 {
		for _, u := range stringEdges(s.schema) {
			add(u.kind, u.what, u.v)
		}
	}
	if allowed["number"] || allowed["integer"] {
		for _, b := range numberEdges(s.schema, allowed["integer"] && !allowed["number"]) {
			add("boundary", b.what, b.v)
		}
	}
	if allowed["array"] {
		items, _ := s.schema["items"].(map[string]any)
		item := w.Value(items)
		add("boundary", "an empty array", val([]any{}))
		add("huge-array", "an array of 10000 items", func() any { return repeat(item, 10000) })
		if n, ok := number(s.schema["maxItems"]); ok && n < 10000 {
			add("boundary", fmt.Sprintf("maxItems+1 (%d) items", int(n)+1), func() any { return repeat(item, int(n)+1) })
		}
	}
	if e, ok := s.schema["enum"].([]any); ok && len(e) > 0 {
		add("enum", "a value outside the enum", val("mcpspec-fuzz-not-in-enum"))
	}
	return out
}

// wrongTypeValue is a value of one JSON type.
type wrongTypeValue struct {
	typ string
	v   any
}

func wrongTypeValues() []wrongTypeValue {
	return []wrongTypeValue{
		{"string", "mcpspec-fuzz"}, {"number", 12345.678}, {"integer", int64(7)}, {"boolean", true},
		{"null", nil}, {"array", []any{"mcpspec-fuzz"}}, {"object", map[string]any{"mcpspec_fuzz": 1}},
	}
}

// edge is one edge-case value, made when it is used.
type edge struct {
	kind, what string
	v          func() any
}

func lit(kind, what string, v any) edge { return edge{kind, what, func() any { return v }} }

// stringEdges are the string values every string slot gets: empty, huge, length bounds, and
// Unicode edge cases (written as raw JSON where Go strings cannot hold them).
func stringEdges(schema map[string]any) []edge {
	out := []edge{
		lit("empty-string", "an empty string", ""),
		{"huge-string", "a 64 KiB string", func() any { return strings.Repeat("A", 64<<10) }},
		{"huge-string", "a 256 KiB string", func() any { return strings.Repeat("A", 256<<10) }},
		lit("unicode", "a lone high surrogate (\\ud800)", json.RawMessage(`"a\ud800b"`)),
		lit("unicode", "a lone low surrogate (\\udc00)", json.RawMessage(`"\udc00"`)),
		lit("unicode", "an escaped NUL", "a\x00b"),
		lit("unicode", "a right-to-left override", "abc\u202edef"),
		lit("unicode", "zero-width characters", "a\u200b\u200c\u200d\u2060b"),
		lit("unicode", "a byte order mark", "\ufeffabc"),
		lit("unicode", "stacked combining marks", "e"+strings.Repeat("\u0301", 200)),
		lit("unicode", "an emoji ZWJ sequence", "\U0001F469\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466"),
		lit("unicode", "astral-plane letters", "\U0001D54F\U0001D550"),
		lit("unicode", "noncharacters", "\uffff\ufffe"),
		lit("unicode", "line and paragraph separators", "a\u2028b\u2029c"),
		lit("unicode", "a C1 control (NEL)", "a\u0085b"),
		lit("unicode", "mixed right-to-left scripts", "שלום مرحبا"),
		lit("unicode", "an ANSI escape sequence", "\x1b[31mred\x1b[0m"),
		{"unicode", "a 10000-character grapheme", func() any { return "a" + strings.Repeat("\u0300", 9999) }},
	}
	if n, ok := number(schema["minLength"]); ok && n > 0 && n < 1<<20 {
		out = append(out, lit("boundary", fmt.Sprintf("minLength-1 (%d) characters", int(n)-1), strings.Repeat("a", int(n)-1)))
	}
	if n, ok := number(schema["maxLength"]); ok && n >= 0 && n < 1<<20 {
		out = append(out, edge{"boundary", fmt.Sprintf("maxLength+1 (%d) characters", int(n)+1), func() any { return strings.Repeat("a", int(n)+1) }})
	}
	if _, ok := schema["pattern"].(string); ok {
		out = append(out, lit("boundary", "a string that matches no usual pattern", "!!mcpspec fuzz!!"))
	}
	if f, ok := schema["format"].(string); ok {
		out = append(out, lit("boundary", "a string in no format", "not a "+f))
	}
	return out
}

// numberEdges are the numbers every numeric slot gets.
func numberEdges(schema map[string]any, integer bool) []edge {
	raw := func(what, v string) edge { return lit("boundary", what, json.RawMessage(v)) }
	out := []edge{
		raw("zero", "0"), raw("-1", "-1"), raw("negative zero", "-0"), raw("1e308", "1e308"), raw("-1e308", "-1e308"),
		raw("2^53+1", "9007199254740993"), raw("2^64", "18446744073709551616"), raw("1e400 (beyond float64)", "1e400"),
		raw("a denormal", "4.9e-324"),
	}
	if integer {
		out = append(out, raw("a fraction for an integer", "1.5"))
	}
	fmtNum := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	if n, ok := number(schema["minimum"]); ok {
		out = append(out, raw("minimum", fmtNum(n)), raw("minimum-1", fmtNum(n-1)))
	}
	if n, ok := number(schema["maximum"]); ok {
		out = append(out, raw("maximum", fmtNum(n)), raw("maximum+1", fmtNum(n+1)))
	}
	if n, ok := number(schema["exclusiveMinimum"]); ok {
		out = append(out, raw("exclusiveMinimum itself", fmtNum(n)))
	}
	if n, ok := number(schema["exclusiveMaximum"]); ok {
		out = append(out, raw("exclusiveMaximum itself", fmtNum(n)))
	}
	return out
}

// baselineStyle is how the fuzzer's valid baseline looks: its own word and format samples,
// numbers from 1 and arrays of at least one item, so that a slot the mutations replace holds
// a value.
func baselineStyle() *synth.Options {
	return &synth.Options{Word: "mcpspec-fuzz", Number: 1, MinItems: 1, Formats: map[string]string{
		"uri": "mcpspec-fuzz://example", "uri-reference": "mcpspec-fuzz://example", "iri": "mcpspec-fuzz://example",
		"email": "fuzz@example.invalid", "date-time": "2026-01-01T00:00:00Z", "date": "2026-01-01", "time": "00:00:00Z",
	}}
}

// allProperties is the baseline of an object schema with every property present.
func allProperties(w *synth.Maker, s map[string]any) any {
	s = w.Resolve(s)
	props, _ := s["properties"].(map[string]any)
	if len(props) == 0 {
		return nil
	}
	out := map[string]any{}
	for _, name := range sortedKeys(props) {
		ps, _ := props[name].(map[string]any)
		out[name] = w.Value(ps)
	}
	return out
}

// slots lists the properties of s (nested objects included, up to maxSlotDepth) in a fixed
// order.
func slots(w *synth.Maker, s map[string]any, at path, depth int) []slot {
	if depth >= maxSlotDepth || s == nil {
		return nil
	}
	s = w.Resolve(s)
	props, _ := s["properties"].(map[string]any)
	req := requiredOf(s)
	var out []slot
	for _, name := range sortedKeys(props) {
		ps, _ := props[name].(map[string]any)
		ps = w.Resolve(ps)
		p := append(append(path{}, at...), name)
		isReq := false
		for _, r := range req {
			isReq = isReq || r == name
		}
		out = append(out, slot{at: p, schema: ps, required: isReq})
		if firstType(ps) == "object" && isReq {
			out = append(out, slots(w, ps, p, depth+1)...)
		}
	}
	return out
}

func firstType(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if str, ok := x.(string); ok && str != "null" {
				return str
			}
		}
	}
	if _, ok := s["properties"]; ok {
		return "object"
	}
	if _, ok := s["items"]; ok {
		return "array"
	}
	return ""
}

// types returns the JSON types s allows; empty when it says none.
func types(s map[string]any) map[string]bool {
	out := map[string]bool{}
	switch t := s["type"].(type) {
	case string:
		out[t] = true
	case []any:
		for _, x := range t {
			if str, ok := x.(string); ok {
				out[str] = true
			}
		}
	}
	if len(out) == 0 {
		if ft := firstType(s); ft != "" {
			out[ft] = true
		}
	}
	return out
}

func typeList(allowed map[string]bool) string {
	if len(allowed) == 0 {
		return "any type"
	}
	return strings.Join(sortedKeys(allowed), "|")
}

func requiredOf(s map[string]any) []string {
	list, _ := s["required"].([]any)
	var out []string
	for _, r := range list {
		if name, ok := r.(string); ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func number(v any) (float64, bool) {
	f, ok := v.(float64)
	return f, ok && !math.IsNaN(f) && !math.IsInf(f, 0)
}

func repeat(v any, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// with returns a deep copy of base with the value at p set to v.
func with(base map[string]any, p path, v any) map[string]any {
	out := deepCopy(base).(map[string]any)
	cur := out
	for i, name := range p {
		if i == len(p)-1 {
			cur[name] = v
			break
		}
		next, ok := cur[name].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[name] = next
		}
		cur = next
	}
	return out
}

// without returns a deep copy of base without the value at p.
func without(base map[string]any, p path) map[string]any {
	out := deepCopy(base).(map[string]any)
	cur := out
	for i, name := range p {
		if i == len(p)-1 {
			delete(cur, name)
			break
		}
		next, ok := cur[name].(map[string]any)
		if !ok {
			break
		}
		cur = next
	}
	return out
}

func lookup(base map[string]any, p path) (any, bool) {
	var cur any = base
	for _, name := range p {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[name]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// encode marshals v without HTML escaping; raw values pass through.
func encode(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return json.RawMessage(`{}`)
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}
