package baseline

import (
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// annotationKeys never constrain values: a node made of them and one combinator is that
// combinator alone. ($defs and definitions hold definitions reached through $ref.)
var annotationKeys = map[string]bool{
	"description": true, "title": true, "default": true, "examples": true, "$comment": true,
	"deprecated": true, "readOnly": true, "writeOnly": true, "$schema": true, "$id": true,
	"$defs": true, "definitions": true, "discriminator": true,
}

func onlyAnnotations(m map[string]any) bool {
	for k := range m {
		if !annotationKeys[k] {
			return false
		}
	}
	return true
}

// overlay copies base and sets the annotation keys of top on it (top wins).
func overlay(base, top map[string]any) map[string]any {
	out := maps.Clone(base)
	if out == nil {
		out = map[string]any{}
	}
	for k, v := range top {
		if annotationKeys[k] {
			out[k] = v
		}
	}
	return out
}

// normal is a schema node after $ref resolution and allOf merging.
type normal struct {
	m map[string]any
	// via identifies the $ref target the node was reached through (0: none), for recursion.
	via uintptr
	// reason, when set, says why the node could not be resolved (a remote $ref …); m is then
	// the node as written.
	reason string
}

// ident is the node's identity for recursion detection: its $ref target, else the raw node.
func (n normal) ident(raw map[string]any) uintptr {
	if n.via != 0 {
		return n.via
	}
	return mapID(raw)
}

func mapID(m map[string]any) uintptr { return reflect.ValueOf(m).Pointer() }

// norm resolves m's $ref (following chains, keeping annotation siblings, and turning
// assertion siblings into an allOf), merges an allOf of plain object schemas, and unwraps a
// one-branch anyOf/oneOf. side selects the document $ref resolve in.
func (d *differ) norm(side int, m map[string]any, depth int) normal {
	raw := m
	var via uintptr
	d.st.budget--
	if d.st.budget < 0 {
		return normal{m: raw, reason: fmt.Sprintf("the schemas are too large to compare fully (over %d comparisons)", maxBudget)}
	}
	if depth > maxDepth/4 {
		return normal{m: raw, reason: fmt.Sprintf("$ref and allOf nested deeper than %d levels", maxDepth/4)}
	}
	for hops := 0; ; hops++ {
		v, has := m["$ref"]
		if !has {
			break
		}
		ref, ok := v.(string)
		if !ok {
			return normal{m: raw, reason: "$ref is not a string"}
		}
		if hops >= maxRefHops {
			return normal{m: raw, reason: fmt.Sprintf("$ref %q is circular (a chain of %d references)", ref, hops)}
		}
		target, why := d.lookup(side, ref)
		if why != "" {
			return normal{m: raw, reason: why}
		}
		via = mapID(target)
		siblings := map[string]any{}
		for k, v := range m {
			if k != "$ref" && !annotationKeys[k] {
				siblings[k] = v
			}
		}
		if len(siblings) == 0 {
			m = overlay(target, m)
			continue
		}
		// 2020-12: $ref next to assertions is their conjunction.
		m = overlay(map[string]any{"allOf": []any{target, siblings}}, m)
		break
	}
	if _, ok := m["allOf"]; ok {
		if merged, ok := d.mergeAllOf(side, m, depth); ok {
			m = merged.m
			if via == 0 {
				via = merged.via
			}
		}
	}
	if kind := unionKind(m); kind != "" {
		if list := m[kind].([]any); len(list) == 1 {
			if b, ok := list[0].(map[string]any); ok {
				r := d.norm(side, b, depth+1)
				if r.reason != "" {
					return normal{m: m, via: via}
				}
				m = overlay(r.m, m)
				if via == 0 {
					via = r.via
				}
			}
		}
	}
	return normal{m: m, via: via}
}

// lookup resolves a $ref in side's document; why says, when it cannot, what stops it.
func (d *differ) lookup(side int, ref string) (map[string]any, string) {
	root := d.roots[side]
	frag, local := strings.CutPrefix(ref, "#")
	if !local {
		id, _ := root["$id"].(string)
		if id == "" || !strings.HasPrefix(ref, strings.TrimSuffix(id, "#")+"#") {
			return nil, fmt.Sprintf("$ref %q is remote", ref)
		}
		frag = strings.TrimPrefix(ref, strings.TrimSuffix(id, "#")+"#")
	}
	if d.st.embedded[side] {
		return nil, fmt.Sprintf("$ref %q is in a schema that embeds other resources ($id), so it may resolve against another base", ref)
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return nil, fmt.Sprintf("$ref %q is not a valid URI fragment", ref)
	}
	if frag != "" && !strings.HasPrefix(frag, "/") {
		return nil, fmt.Sprintf("$ref %q names an anchor", ref)
	}
	var cur any = root
	if frag != "" {
		for _, seg := range strings.Split(frag[1:], "/") {
			seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
			switch c := cur.(type) {
			case map[string]any:
				next, ok := c[seg]
				if !ok {
					return nil, fmt.Sprintf("$ref %q does not resolve in this schema", ref)
				}
				cur = next
			case []any:
				i, err := strconv.Atoi(seg)
				if err != nil || i < 0 || i >= len(c) || strconv.Itoa(i) != seg {
					return nil, fmt.Sprintf("$ref %q does not resolve in this schema", ref)
				}
				cur = c[i]
			default:
				return nil, fmt.Sprintf("$ref %q does not resolve in this schema", ref)
			}
		}
	}
	switch t := cur.(type) {
	case map[string]any:
		return t, ""
	case bool:
		return nil, fmt.Sprintf("$ref %q points to the boolean schema %v", ref, t)
	}
	return nil, fmt.Sprintf("$ref %q does not point to a schema", ref)
}

func joinReasons(a, b string) string {
	switch {
	case a == b || b == "":
		return a
	case a == "":
		return b
	}
	return "before: " + a + "; now: " + b
}

// nameMaps are keywords whose value maps names to schemas.
var nameMaps = map[string]bool{"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true}

// dataKeys are keywords whose value is instance data, never a schema.
var dataKeys = map[string]bool{"enum": true, "const": true, "default": true, "examples": true}

// embedsResources reports whether a schema below the root declares $id (an embedded resource,
// whose local $ref resolve against its own base). Depth-bounded; too deep counts as embedding.
func embedsResources(m map[string]any, root bool, depth int) bool {
	if depth > maxDepth {
		return true
	}
	if _, ok := m["$id"].(string); ok && !root {
		return true
	}
	for k, v := range m {
		if dataKeys[k] {
			continue
		}
		if nameMaps[k] {
			if nm, ok := v.(map[string]any); ok {
				for _, s := range nm {
					if sm, ok := s.(map[string]any); ok && embedsResources(sm, false, depth+1) {
						return true
					}
				}
			}
			continue
		}
		switch x := v.(type) {
		case map[string]any:
			if embedsResources(x, false, depth+1) {
				return true
			}
		case []any:
			for _, e := range x {
				if em, ok := e.(map[string]any); ok && embedsResources(em, false, depth+1) {
					return true
				}
			}
		}
	}
	return false
}

// plainObjectKeys may appear in an allOf branch that is merged by properties and required.
var plainObjectKeys = map[string]bool{"type": true, "properties": true, "required": true, "additionalProperties": true}

// plainObject reports whether s constrains only an object's properties and required names
// (type object or none; additionalProperties absent or true), so allOf of such schemas is
// their properties merged and their required names united.
func plainObject(s map[string]any) bool {
	for k, v := range s {
		if annotationKeys[k] {
			continue
		}
		if !plainObjectKeys[k] {
			return false
		}
		switch k {
		case "type":
			if t := typeSet(s); len(t) != 1 || !t["object"] {
				return false
			}
		case "properties":
			if _, ok := v.(map[string]any); !ok {
				return false
			}
		case "required":
			rs, ok := v.([]any)
			if !ok {
				return false
			}
			for _, r := range rs {
				if _, ok := r.(string); !ok {
					return false
				}
			}
		case "additionalProperties":
			if v != true {
				return false
			}
		}
	}
	return true
}

// mergeAllOf merges m's allOf into one schema: a single branch next to annotations is that
// branch; branches (and m's own keywords) that are all plain objects are merged. false when it
// cannot be merged soundly.
func (d *differ) mergeAllOf(side int, m map[string]any, depth int) (normal, bool) {
	list, ok := m["allOf"].([]any)
	if !ok || len(list) > maxBranches {
		return normal{}, false
	}
	rest := map[string]any{}
	for k, v := range m {
		if k != "allOf" {
			rest[k] = v
		}
	}
	var branches []map[string]any
	var via uintptr
	for _, x := range list {
		switch v := x.(type) {
		case bool:
			if !v {
				return normal{}, false
			}
		case map[string]any:
			r := d.norm(side, v, depth+1)
			if r.reason != "" {
				return normal{}, false
			}
			if len(list) == 1 {
				via = r.via
			}
			branches = append(branches, r.m)
		default:
			return normal{}, false
		}
	}
	switch {
	case len(branches) == 0:
		return normal{m: rest}, true
	case len(branches) == 1 && onlyAnnotations(rest):
		return normal{m: overlay(branches[0], rest), via: via}, true
	}
	all := append([]map[string]any{rest}, branches...)
	for _, p := range all {
		if !plainObject(p) {
			return normal{}, false
		}
	}
	merged := map[string]any{}
	props := map[string]any{}
	required := map[string]bool{}
	for _, p := range all {
		for k, v := range p {
			if annotationKeys[k] {
				if _, set := merged[k]; !set {
					merged[k] = v
				}
			}
		}
		if p["type"] != nil {
			merged["type"] = "object"
		}
		pp := asMap(p["properties"])
		for _, name := range slices.Sorted(maps.Keys(pp)) {
			s := pp[name]
			prev, seen := props[name]
			switch {
			case !seen:
				props[name] = s
			case !sameSchema(d, [2]map[string]any{d.roots[side], d.roots[side]}, prev, s):
				props[name] = map[string]any{"allOf": []any{prev, s}}
			}
		}
		for r := range requiredSet(p) {
			required[r] = true
		}
	}
	if len(props) > 0 {
		merged["properties"] = props
	}
	if len(required) > 0 {
		var rs []any
		for _, r := range slices.Sorted(maps.Keys(required)) {
			rs = append(rs, r)
		}
		merged["required"] = rs
	}
	return normal{m: merged}, true
}

// same reports whether two schemas (old and new) are structurally identical once their local
// $ref are followed; false when it cannot tell (limits reached).
func (d *differ) same(x, y any) bool { return sameSchema(d, d.roots, x, y) }

func sameSchema(d *differ, roots [2]map[string]any, x, y any) bool {
	c := sameCtx{d: d, roots: roots, seen: map[[2]uintptr]bool{}}
	return c.eq(x, y, 0)
}

type sameCtx struct {
	d     *differ
	roots [2]map[string]any
	seen  map[[2]uintptr]bool
}

// deref follows a node that is only a $ref; reason when it cannot.
func (c *sameCtx) deref(side int, m map[string]any) (map[string]any, uintptr, bool) {
	if len(m) != 1 {
		return m, 0, true
	}
	ref, ok := m["$ref"].(string)
	if !ok {
		return m, 0, true
	}
	r := &differ{roots: c.roots, st: c.d.st}
	var via uintptr
	for hops := 0; hops < maxRefHops; hops++ {
		t, why := r.lookup(side, ref)
		if why != "" {
			return m, 0, false
		}
		via, m = mapID(t), t
		next, ok := t["$ref"].(string)
		if !ok || len(t) != 1 {
			return m, via, true
		}
		ref = next
	}
	return m, 0, false
}

func (c *sameCtx) eq(x, y any, depth int) bool {
	c.d.st.budget--
	if c.d.st.budget < 0 || depth > maxDepth {
		return false
	}
	switch xv := x.(type) {
	case map[string]any:
		yv, ok := y.(map[string]any)
		if !ok {
			return false
		}
		rx, hasX := xv["$ref"]
		ry, hasY := yv["$ref"]
		if hasX && hasY && (len(xv) > 1 || len(yv) > 1) {
			// $ref next to other keywords: the siblings, then the references.
			return c.eq(without(xv, "$ref"), without(yv, "$ref"), depth+1) &&
				c.eq(map[string]any{"$ref": rx}, map[string]any{"$ref": ry}, depth+1)
		}
		tx, idx, okx := c.deref(0, xv)
		ty, idy, oky := c.deref(1, yv)
		if !okx || !oky {
			return reflect.DeepEqual(xv, yv)
		}
		if idx != 0 || idy != 0 {
			if idx == 0 {
				idx = mapID(xv)
			}
			if idy == 0 {
				idy = mapID(yv)
			}
			key := [2]uintptr{idx, idy}
			if c.seen[key] {
				return true
			}
			c.seen[key] = true
		}
		if len(tx) != len(ty) {
			return false
		}
		for _, k := range slices.Sorted(maps.Keys(tx)) {
			vy, ok := ty[k]
			if !ok {
				return false
			}
			if dataKeys[k] {
				if !reflect.DeepEqual(tx[k], vy) {
					return false
				}
			} else if !c.eq(tx[k], vy, depth+1) {
				return false
			}
		}
		return true
	case []any:
		yv, ok := y.([]any)
		if !ok || len(xv) != len(yv) {
			return false
		}
		for i := range xv {
			if !c.eq(xv[i], yv[i], depth+1) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(x, y)
}

// without copies m minus key.
func without(m map[string]any, key string) map[string]any {
	out := maps.Clone(m)
	delete(out, key)
	return out
}
