package baseline

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// unionKind is "anyOf" or "oneOf" when m is that combinator and annotations only, with a
// non-empty list of schemas (at most maxBranches); "" otherwise.
func unionKind(m map[string]any) string {
	kind := ""
	for k := range m {
		switch {
		case k == "anyOf" || k == "oneOf":
			if kind != "" {
				return ""
			}
			kind = k
		case !annotationKeys[k]:
			return ""
		}
	}
	if kind == "" {
		return ""
	}
	list, ok := m[kind].([]any)
	if !ok || len(list) == 0 || len(list) > maxBranches {
		return ""
	}
	for _, b := range list {
		switch b.(type) {
		case map[string]any, bool:
		default:
			return ""
		}
	}
	return kind
}

// mixedUnions compares the anyOf/oneOf of nodes that have other keywords too (a conjunction).
func (d *differ) mixedUnions(path string, a, b map[string]any) {
	for _, k := range []string{"anyOf", "oneOf"} {
		ua, okA := a[k]
		ub, okB := b[k]
		switch {
		case !okA && !okB:
		case okA && okB && unionKind(map[string]any{k: ua}) == k && unionKind(map[string]any{k: ub}) == k:
			d.union(path, map[string]any{k: ua}, map[string]any{k: ub})
		case okA && okB:
			if !d.same(ua, ub) {
				d.review(path, "%s changed", k)
			}
		case okA:
			d.review(path, "%s removed next to other keywords (a constraint dropped)", k)
		default:
			d.review(path, "%s added next to other keywords (a further constraint)", k)
		}
	}
}

// union compares two nodes at least one of which is an anyOf/oneOf (the other, if not, is
// taken as a union of one branch per type it allows). Branches are matched by equality, then
// by label, then by type; an unmatched branch is removed or added, unless another branch
// accepts all its values.
func (d *differ) union(path string, a, b map[string]any) {
	ka, kb := unionKind(a), unionKind(b)
	annA, annB := annotationsOf(a, ka != "", b), annotationsOf(b, kb != "", a)
	ba, bb := d.branches(0, a, annA), d.branches(1, b, annB)
	d.annotations(path, annA, annB)
	d.otherKeywords(path, annA, annB, func(k string) bool { return handledKeywords[k] })

	sub := d.fork(d.dir, false)
	sub.matchBranches(path, ka, ba, kb, bb)
	if d.st.budget < 0 {
		// Out of budget part-way: one note rather than a guess per branch.
		if !d.stopped {
			d.stopped = true
			d.review(path, "the schemas are too large to compare fully (over %d comparisons)", maxBudget)
		}
		return
	}
	if len(sub.out) == 0 {
		return
	}
	overlapA, overlapB := ka == "oneOf" && !pairwiseDisjoint(ba), kb == "oneOf" && !pairwiseDisjoint(bb)
	if overlapA || overlapB {
		// With overlapping branches even a redundant branch added changes which values match
		// exactly one: only annotation changes are safe to report as such.
		onlyAnnotations := true
		for _, c := range sub.out {
			onlyAnnotations = onlyAnnotations && c.eff == neutral && slices.Contains(neutralAnnotations, strings.TrimSuffix(c.What, " changed"))
		}
		if !onlyAnnotations {
			d.review(path, "oneOf branches changed, and some of them overlap, so which values match exactly one branch was not analysed")
			return
		}
	}
	d.out = append(d.out, sub.out...)
}

// annotationsOf returns the annotation keywords of m compared at the union's level: all of a
// union's; of a node taken as a union of one, those the other side has at its level (the
// rest stay in the node's one branch, where the other side's branches carry theirs).
func annotationsOf(m map[string]any, isUnion bool, other map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if _, there := other[k]; annotationKeys[k] && (isUnion || there) {
			out[k] = v
		}
	}
	return out
}

// fork returns a differ sharing d's state (budget, recursion set); swapped exchanges the
// documents, for comparing a new schema against an old one.
func (d *differ) fork(dir direction, swapped bool) *differ {
	f := &differ{dir: dir, where: d.where, roots: d.roots, st: d.st, depth: d.depth}
	if swapped {
		f.roots[0], f.roots[1] = f.roots[1], f.roots[0]
	}
	return f
}

// dryRun compares x with y without reporting, judging by values accepted (input direction):
// equal is true when nothing at all differs; covered when y accepts every value x does (no
// tightening, nothing left for review); unknown when something could not be analysed.
func (d *differ) dryRun(x, y map[string]any, swapped bool) (equal, covered, unknown bool) {
	f := d.fork(input, swapped)
	f.node("", x, y)
	covered = true
	for _, c := range f.out {
		switch c.eff {
		case tighten, changed:
			covered = false
		case review:
			covered, unknown = false, true
		}
	}
	return len(f.out) == 0, covered, unknown
}

// branch is one alternative of a union: m resolved (for labels, types and disjointness), raw
// as compared (a branch reached through a $ref keeps it, so recursion is detected there).
type branch struct{ m, raw map[string]any }

// branches lists the branches of side's node: a union's, normalised, nested anyOf flattened
// and multi-type branches split by type; a node that is not a union is one branch (split).
func (d *differ) branches(side int, m, lifted map[string]any) []branch {
	kind := unionKind(m)
	if kind == "" {
		stripped := map[string]any{}
		for k, v := range m {
			if _, up := lifted[k]; !up {
				stripped[k] = v
			}
		}
		return pieces(splitByType(stripped))
	}
	var out []branch
	d.flatten(side, kind, m, &out, 0)
	return out
}

func pieces(ms []map[string]any) []branch {
	out := make([]branch, len(ms))
	for i, m := range ms {
		out[i] = branch{m, m}
	}
	return out
}

func (d *differ) flatten(side int, kind string, m map[string]any, out *[]branch, depth int) {
	for _, x := range m[kind].([]any) {
		var b map[string]any
		switch v := x.(type) {
		case bool:
			if !v {
				continue // false accepts nothing: a branch that never matches
			}
			b = map[string]any{}
		case map[string]any:
			b = v
		}
		r := d.norm(side, b, 0)
		if r.reason != "" {
			*out = append(*out, branch{b, b}) // compared as written; node reports why for review
			continue
		}
		// An inline anyOf inside an anyOf is the same alternatives; one behind a $ref stays a
		// branch, so a recursive definition is not unrolled.
		if kind == "anyOf" && r.via == 0 && unionKind(r.m) == "anyOf" && depth < 4 && len(*out) < maxBranches {
			d.flatten(side, kind, r.m, out, depth+1)
			continue
		}
		split := splitByType(r.m)
		if len(split) == 1 && r.via != 0 {
			*out = append(*out, branch{r.m, b})
			continue
		}
		*out = append(*out, pieces(split)...)
	}
}

// typeKeywords are the keywords that only constrain values of one JSON type.
var typeKeywords = map[string]string{
	"minLength": "string", "maxLength": "string", "pattern": "string", "contentEncoding": "string", "contentMediaType": "string",
	"minimum": "number", "maximum": "number", "exclusiveMinimum": "number", "exclusiveMaximum": "number", "multipleOf": "number",
	"items": "array", "prefixItems": "array", "minItems": "array", "maxItems": "array", "uniqueItems": "array",
	"contains": "array", "minContains": "array", "maxContains": "array", "additionalItems": "array",
	"properties": "object", "required": "object", "additionalProperties": "object", "patternProperties": "object",
	"minProperties": "object", "maxProperties": "object", "propertyNames": "object", "dependentRequired": "object",
	"dependentSchemas": "object",
}

// jsonType is v's JSON type; integral numbers are "integer".
func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return "integer"
		}
		return "number"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return ""
}

func typeAccepts(t string, v any) bool {
	jt := jsonType(v)
	return jt == t || t == "number" && jt == "integer"
}

// splitByType turns a schema allowing several types into one schema per type, each keeping
// only the keywords that apply to it (an enum keeps the values of that type): the same values,
// as a union. A schema with keywords that apply across types (not, allOf …) stays whole.
func splitByType(m map[string]any) []map[string]any {
	types := typeSet(m)
	vals, hasEnum := enumValues(m)
	if types == nil && hasEnum {
		types = map[string]bool{}
		for _, v := range vals {
			t := jsonType(v)
			if t == "integer" {
				t = "number"
			}
			types[t] = true
		}
	}
	if len(types) <= 1 {
		return []map[string]any{m}
	}
	for k := range m {
		if _, typed := typeKeywords[k]; !typed && k != "type" && k != "enum" && k != "const" && k != "format" && !annotationKeys[k] {
			return []map[string]any{m}
		}
	}
	var out []map[string]any
	for _, t := range slices.Sorted(maps.Keys(types)) {
		b := map[string]any{"type": t}
		for k, v := range m {
			fam, typed := typeKeywords[k]
			switch {
			case typed && (fam == t || fam == "number" && t == "integer"):
				b[k] = v
			case k == "format" && t != "null" && t != "boolean":
				b[k] = v
			}
		}
		if hasEnum {
			var kept []any
			for _, v := range vals {
				if typeAccepts(t, v) {
					kept = append(kept, v)
				}
			}
			switch {
			case len(kept) == 0:
				continue // no value of this type is allowed
			case t == "null", t == "boolean" && len(kept) == 2:
				// every value of the type: no enum needed
			default:
				b["enum"] = kept
			}
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		return []map[string]any{m}
	}
	return out
}

// enumValues are the values enum/const allow (deduplicated, in order); false when neither is set.
func enumValues(m map[string]any) ([]any, bool) {
	set := enumSet(m)
	if set == nil {
		return nil, false
	}
	var out []any
	seen := map[string]bool{}
	add := func(v any) {
		b, _ := json.Marshal(v)
		if set[string(b)] && !seen[string(b)] {
			seen[string(b)] = true
			out = append(out, v)
		}
	}
	if c, ok := m["const"]; ok {
		add(c)
	} else if vs, ok := m["enum"].([]any); ok {
		for _, v := range vs {
			add(v)
		}
	}
	return out, true
}

// discriminator finds the first property (by name) whose schema allows one value only: how
// tagged unions tell their object branches apart ("kind": {"const": "circle"}).
func discriminator(b map[string]any) (string, string) {
	props := asMap(b["properties"])
	for _, name := range slices.Sorted(maps.Keys(props)) {
		if set := enumSet(asMap(props[name])); len(set) == 1 {
			for v := range set {
				return name, v
			}
		}
	}
	return "", ""
}

// branchLabel names a branch in reports: its type, its discriminator, or its values.
func branchLabel(b map[string]any) string {
	ts := typeSet(b)
	s := typeName(ts)
	if ts == nil {
		if vals := enumSet(b); vals != nil {
			s = "enum " + strings.Join(slices.Sorted(maps.Keys(vals)), ", ")
		} else if raw, err := json.Marshal(b); err == nil && len(raw) <= 60 {
			s = string(raw)
		}
	}
	if p, v := discriminator(b); p != "" {
		s += " " + p + "=" + v
	}
	return s
}

// labels returns each branch's label, numbered (#1, #2 …) where a label repeats on its side,
// and the base label.
func labels(bs []branch) (full, base []string) {
	count := map[string]int{}
	for _, b := range bs {
		l := branchLabel(b.m)
		base = append(base, l)
		count[l]++
	}
	for i, l := range base {
		if count[l] > 1 {
			l = fmt.Sprintf("%s #%d", l, i+1)
		}
		full = append(full, l)
	}
	return full, base
}

func qualify(path, label string) string { return path + "<" + label + ">" }

// branchWord names a side's branches in messages.
func branchWord(kind string) string {
	if kind == "" {
		return "type"
	}
	return kind + " branch"
}

func (d *differ) matchBranches(path, ka string, A []branch, kb string, B []branch) {
	usedA, usedB := make([]bool, len(A)), make([]bool, len(B))
	// 1. Structurally equal (after $ref resolution and normalisation).
	for i, o := range A {
		for j, n := range B {
			if usedB[j] {
				continue
			}
			if eq, _, _ := d.dryRun(o.raw, n.raw, false); eq {
				usedA[i], usedB[j] = true, true
				break
			}
		}
	}
	fullA, baseA := labels(A)
	fullB, baseB := labels(B)
	// 2. Same label (type and discriminator), then 3. same type, when unique on both sides.
	typesA, typesB := make([]string, len(A)), make([]string, len(B))
	for i, o := range A {
		typesA[i] = typeName(typeSet(o.m))
	}
	for j, n := range B {
		typesB[j] = typeName(typeSet(n.m))
	}
	for _, keys := range [][2][]string{{baseA, baseB}, {typesA, typesB}} {
		keyA, keyB := keys[0], keys[1]
		for i := range A {
			if usedA[i] {
				continue
			}
			j, unique := -1, true
			for jj := range B {
				if !usedB[jj] && keyB[jj] == keyA[i] {
					if j >= 0 {
						unique = false
					}
					j = jj
				}
			}
			for ii := range A {
				if ii != i && !usedA[ii] && keyA[ii] == keyA[i] {
					unique = false
				}
			}
			if j < 0 || !unique {
				continue
			}
			usedA[i], usedB[j] = true, true
			d.node(qualify(path, keyA[i]), A[i].raw, B[j].raw)
		}
	}
	// 4. Removed and added branches, unless another branch covers their values.
	for i, o := range A {
		if usedA[i] {
			continue
		}
		covered, unknown := false, false
		for _, n := range B {
			_, c, u := d.dryRun(o.raw, n.raw, false)
			covered, unknown = covered || c, unknown || u
		}
		switch {
		case covered:
			d.rec(neutral, path, "%s removed: %s (another branch still accepts its values)", branchWord(ka), fullA[i])
		case unknown:
			d.review(path, "%s removed: %s; whether another branch still accepts its values could not be decided", branchWord(ka), fullA[i])
		default:
			d.tighten(path, "%s removed: %s", branchWord(ka), fullA[i])
		}
	}
	for j, n := range B {
		if usedB[j] {
			continue
		}
		covered, unknown := false, false
		for _, o := range A {
			_, c, u := d.dryRun(n.raw, o.raw, true)
			covered, unknown = covered || c, unknown || u
		}
		switch {
		case covered:
			d.rec(neutral, path, "%s added: %s (its values were already accepted)", branchWord(kb), fullB[j])
		case unknown:
			d.review(path, "%s added: %s; whether its values were already accepted could not be decided", branchWord(kb), fullB[j])
		default:
			d.loosen(path, "%s added: %s", branchWord(kb), fullB[j])
		}
	}
}

// pairwiseDisjoint reports whether no value can match two of the branches (then oneOf means
// the same as anyOf).
func pairwiseDisjoint(bs []branch) bool {
	for i := range bs {
		for j := i + 1; j < len(bs); j++ {
			if !disjoint(bs[i].m, bs[j].m) {
				return false
			}
		}
	}
	return true
}

// disjoint reports whether no value can match both x and y, as far as types, enum/const and a
// required discriminator property show.
func disjoint(x, y map[string]any) bool {
	tx, ty := typeSet(x), typeSet(y)
	if tx != nil && ty != nil && !overlap(tx, ty) {
		return true
	}
	ex, ey := enumSet(x), enumSet(y)
	if ex != nil && ey != nil && !overlapKeys(ex, ey) {
		return true
	}
	if enumOutside(x, ty) || enumOutside(y, tx) {
		return true
	}
	px, py := asMap(x["properties"]), asMap(y["properties"])
	rx, ry := requiredSet(x), requiredSet(y)
	for name, sx := range px {
		sy, ok := py[name]
		if !ok || !(rx[name] || ry[name]) {
			continue
		}
		// A value matching both is an object (the only type both allow), so it has the property
		// (one requires it), and its value must satisfy both.
		if !onlyObjectsInCommon(tx, ty) {
			continue
		}
		vx, vy := enumSet(asMap(sx)), enumSet(asMap(sy))
		if vx != nil && vy != nil && !overlapKeys(vx, vy) {
			return true
		}
	}
	return false
}

// enumOutside reports whether every value m's enum allows is of a type outside types.
func enumOutside(m map[string]any, types map[string]bool) bool {
	vals, ok := enumValues(m)
	if !ok || types == nil {
		return false
	}
	for _, v := range vals {
		for t := range types {
			if typeAccepts(t, v) {
				return false
			}
		}
	}
	return true
}

// onlyObjectsInCommon reports whether object is the only type both sets allow (nil: any).
func onlyObjectsInCommon(a, b map[string]bool) bool {
	if a == nil || b == nil {
		return false
	}
	for t := range a {
		if t != "object" && overlap(map[string]bool{t: true}, b) {
			return false
		}
	}
	return true
}

func overlap(a, b map[string]bool) bool {
	for t := range a {
		if b[t] || t == "integer" && b["number"] || t == "number" && b["integer"] {
			return true
		}
	}
	return false
}

func overlapKeys(a, b map[string]bool) bool {
	for k := range a {
		if b[k] {
			return true
		}
	}
	return false
}
