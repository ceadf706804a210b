package collection

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mcpspec/mcpspec/assert"
)

// decoder turns a yaml.Node tree into the typed model, collecting every error with its position.
type decoder struct {
	file     string
	errs     ErrorList
	reg      *assert.Registry
	copts    *assert.CompileOptions
	maxDepth int
	maxTests int
	// refs are the variable references met in strings, with where they were written.
	refs []varRef
	// test is the index of the test being decoded, -1 outside tests.
	test int
	// templated holds the string-form servers whose text has variables, with its node: they
	// are classified once the variables are known (see resolveTemplates).
	templated map[*Server]templated
	// defaultsServer is the node of a defaults.server that names its server by a variable.
	defaultsServer *yaml.Node
}

// templated is a string-form server written with variables: its text and node.
type templated struct {
	text string
	node *yaml.Node
}

// varRef is one {{name}} in the file.
type varRef struct {
	name string
	pos  Pos
	test int // index into Collection.Tests, -1 for server/environment level
}

// field is one key/value pair of a mapping.
type field struct{ key, val *yaml.Node }

// pos returns the position of n.
func (d *decoder) pos(n *yaml.Node) Pos {
	if n == nil {
		return Pos{File: d.file}
	}
	return Pos{File: d.file, Line: n.Line, Column: n.Column}
}

// errf records an error at n.
func (d *decoder) errf(n *yaml.Node, hint, format string, args ...any) {
	d.errs = append(d.errs, &Error{Pos: d.pos(n), Msg: fmt.Sprintf(format, args...), Hint: hint})
}

// kindName describes a node for "got …" messages.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!str":
			return fmt.Sprintf("string %q", truncateStr(n.Value, 40))
		case "!!null":
			return "null"
		default:
			return fmt.Sprintf("%s %s", strings.TrimPrefix(n.Tag, "!!"), truncateStr(n.Value, 40))
		}
	}
	return "nothing"
}

// truncateStr shortens s for messages.
func truncateStr(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// fields reads a mapping, reporting non-mappings, non-string keys, duplicate and unknown keys
// (with a did-you-mean hint). what names the mapping in messages (`test "Get user"`).
func (d *decoder) fields(n *yaml.Node, what string, allowed []string) (map[string]field, bool) {
	if n.Kind != yaml.MappingNode {
		d.errf(n, "", "%s must be a mapping, got %s", what, kindName(n))
		return nil, false
	}
	out := make(map[string]field, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || (k.Tag != "!!str" && k.Tag != "!!int" && k.Tag != "!!bool" && k.Tag != "!!float") {
			d.errf(k, "", "keys of %s must be strings, got %s", what, kindName(k))
			continue
		}
		if _, dup := out[k.Value]; dup {
			d.errf(k, "", "duplicate key %q in %s", k.Value, what)
			continue
		}
		if allowed != nil && !has(allowed, k.Value) {
			d.errf(k, suggest(k.Value, allowed), "unknown key %q in %s", k.Value, what)
			continue
		}
		out[k.Value] = field{key: k, val: v}
	}
	return out, true
}

// has reports whether list holds s.
func has(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// noteRefs records the variable references in a string written at n.
func (d *decoder) noteRefs(s string, n *yaml.Node) {
	for _, name := range References(s) {
		d.refs = append(d.refs, varRef{name: name, pos: d.pos(n), test: d.test})
	}
}

// str reads a string scalar (recording its variable references).
func (d *decoder) str(n *yaml.Node, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		hint := ""
		if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
			hint = fmt.Sprintf("quote it: %q", n.Value)
		}
		d.errf(n, hint, "%s must be a string, got %s", what, kindName(n))
		return "", false
	}
	d.noteRefs(n.Value, n)
	return n.Value, true
}

// nonEmpty reads a non-empty string.
func (d *decoder) nonEmpty(n *yaml.Node, what string) (string, bool) {
	s, ok := d.str(n, what)
	if ok && strings.TrimSpace(s) == "" {
		d.errf(n, "", "%s must not be empty", what)
		return "", false
	}
	return s, ok
}

// integer reads an integer scalar within [lo, hi].
func (d *decoder) integer(n *yaml.Node, what string, lo, hi int64) (int64, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		d.errf(n, "", "%s must be an integer, got %s", what, kindName(n))
		return 0, false
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
	if err != nil {
		d.errf(n, "", "%s: %q is not a valid integer", what, n.Value)
		return 0, false
	}
	if v < lo || v > hi {
		d.errf(n, "", "%s must be between %d and %d, got %d", what, lo, hi, v)
		return 0, false
	}
	return v, true
}

// number reads an integer or float scalar within [lo, hi].
func (d *decoder) number(n *yaml.Node, what string, lo, hi float64) (float64, bool) {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
		d.errf(n, "", "%s must be a number, got %s", what, kindName(n))
		return 0, false
	}
	var v float64
	if err := n.Decode(&v); err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		d.errf(n, "", "%s: %q is not a finite number", what, n.Value)
		return 0, false
	}
	if v < lo || v > hi {
		d.errf(n, "", "%s must be between %g and %g, got %g", what, lo, hi, v)
		return 0, false
	}
	return v, true
}

// boolean reads a bool scalar.
func (d *decoder) boolean(n *yaml.Node, what string) (bool, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		d.errf(n, "", "%s must be true or false, got %s", what, kindName(n))
		return false, false
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		d.errf(n, "", "%s: %v", what, err)
		return false, false
	}
	return b, true
}

// maxDuration caps any duration in a collection.
const maxDuration = 7 * 24 * time.Hour

// DurationRule states how durations are written, in collections and on the command line alike.
const DurationRule = "write a duration with a unit (30s, 500ms, 1m30s) or a whole number of milliseconds (500)"

// ParseDuration reads a duration by the one rule of collections and flags: a Go duration
// ("30s", "500ms", "1m30s"), or a bare whole number of milliseconds ("500", "1_000"). Its
// errors say what is wrong without Go's parser wording.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if ms, err := strconv.ParseInt(strings.ReplaceAll(t, "_", ""), 10, 64); err == nil {
		if ms > int64(maxDuration/time.Millisecond) {
			return 0, fmt.Errorf("%q milliseconds is out of range", s)
		}
		return time.Duration(ms) * time.Millisecond, nil
	}
	v, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration", s)
	}
	return v, nil
}

// duration reads a Go duration string ("5s", "250ms", "1m30s") or a bare integer of
// milliseconds (5000). It must be positive.
func (d *decoder) duration(n *yaml.Node, what string) (time.Duration, bool) {
	if n.Kind != yaml.ScalarNode {
		d.errf(n, "", "%s must be a duration, got %s", what, kindName(n))
		return 0, false
	}
	if n.Tag != "!!int" && n.Tag != "!!str" {
		d.errf(n, DurationRule, "%s must be a duration, got %s", what, kindName(n))
		return 0, false
	}
	v, err := ParseDuration(n.Value)
	if err != nil {
		d.errf(n, DurationRule, "%s: %v", what, err)
		return 0, false
	}
	if v <= 0 {
		d.errf(n, "", "%s must be positive, got %s", what, n.Value)
		return 0, false
	}
	if v > maxDuration {
		d.errf(n, "", "%s must be at most %s, got %s", what, maxDuration, v)
		return 0, false
	}
	return v, true
}

// strList reads a list of strings.
func (d *decoder) strList(n *yaml.Node, what string) ([]string, bool) {
	if n.Kind != yaml.SequenceNode {
		hint := ""
		if n.Kind == yaml.ScalarNode {
			hint = fmt.Sprintf("write a list: [%s]", n.Value)
		}
		d.errf(n, hint, "%s must be a list of strings, got %s", what, kindName(n))
		return nil, false
	}
	out := make([]string, 0, len(n.Content))
	ok := true
	for _, e := range n.Content {
		s, good := d.str(e, what+" entry")
		ok = ok && good
		out = append(out, s)
	}
	return out, ok
}

// strMap reads a mapping of scalars as text (env, headers, prompt arguments).
func (d *decoder) strMap(n *yaml.Node, what string) (map[string]string, bool) {
	fs, ok := d.fields(n, what, nil)
	if !ok {
		return nil, false
	}
	out := make(map[string]string, len(fs))
	for k, f := range fs {
		if f.val.Kind != yaml.ScalarNode || f.val.Tag == "!!null" {
			d.errf(f.val, "", "%s %q must be a string, got %s", what, k, kindName(f.val))
			ok = false
			continue
		}
		d.noteRefs(f.val.Value, f.val)
		out[k] = f.val.Value
	}
	return out, ok
}

// object reads a free-form mapping.
func (d *decoder) object(n *yaml.Node, what string) (map[string]any, bool) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return map[string]any{}, true
	}
	if n.Kind != yaml.MappingNode {
		d.errf(n, "", "%s must be a mapping, got %s", what, kindName(n))
		return nil, false
	}
	v, ok := d.value(n, what, 1)
	if !ok {
		return nil, false
	}
	return v.(map[string]any), true
}

// value reads a free-form JSON-compatible value (input, expected values, inline schemas) nested at
// most maxDepth levels. Integers become int64 (float64 beyond), YAML timestamps stay strings.
func (d *decoder) value(n *yaml.Node, what string, depth int) (any, bool) {
	if depth > d.maxDepth {
		d.errf(n, "", "%s nests deeper than %d levels", what, d.maxDepth)
		return nil, false
	}
	switch n.Kind {
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return nil, true
		case "!!bool":
			var b bool
			if err := n.Decode(&b); err != nil {
				d.errf(n, "", "%s: %v", what, err)
				return nil, false
			}
			return b, true
		case "!!int":
			if i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64); err == nil {
				return i, true
			}
			return d.float(n, what)
		case "!!float":
			return d.float(n, what)
		case "!!str", "!!timestamp":
			d.noteRefs(n.Value, n)
			return n.Value, true
		default:
			d.errf(n, "", "%s: YAML tag %s is not supported (JSON values only)", what, n.Tag)
			return nil, false
		}
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		ok := true
		for _, e := range n.Content {
			v, good := d.value(e, what, depth+1)
			ok = ok && good
			out = append(out, v)
		}
		return out, ok
	case yaml.MappingNode:
		fs, ok := d.fields(n, what, nil)
		if !ok {
			return nil, false
		}
		out := make(map[string]any, len(fs))
		for k, f := range fs {
			d.noteRefs(k, f.key)
			v, good := d.value(f.val, what, depth+1)
			ok = ok && good
			out[k] = v
		}
		return out, ok
	}
	d.errf(n, "", "%s: unsupported YAML node", what)
	return nil, false
}

// float decodes a finite float scalar.
func (d *decoder) float(n *yaml.Node, what string) (any, bool) {
	var f float64
	if err := n.Decode(&f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		d.errf(n, "", "%s: %q is not a finite number (JSON has no NaN or infinity)", what, n.Value)
		return nil, false
	}
	return f, true
}

// checkTree reports what the loader never accepts anywhere: anchors and aliases (and so merge
// keys), custom tags, and nesting beyond a hard bound. It returns false when decoding should not
// go on.
func (d *decoder) checkTree(n *yaml.Node, depth, limit int) bool {
	if depth > limit {
		d.errf(n, "", "document nests deeper than %d levels", limit)
		return false
	}
	ok := true
	if n.Anchor != "" {
		d.errf(n, "repeat the value instead", "YAML anchors (&%s) and aliases are not supported", n.Anchor)
		ok = false
	}
	switch n.Kind {
	case yaml.AliasNode:
		d.errf(n, "repeat the value instead", "YAML aliases (*%s) are not supported", n.Value)
		return false
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!str", "!!int", "!!float", "!!bool", "!!null", "!!timestamp":
		default:
			d.errf(n, "", "YAML tag %s is not supported", n.Tag)
			ok = false
		}
	case yaml.MappingNode, yaml.SequenceNode, yaml.DocumentNode:
		if n.Kind != yaml.DocumentNode && n.Tag != "!!map" && n.Tag != "!!seq" {
			d.errf(n, "", "YAML tag %s is not supported", n.Tag)
			ok = false
		}
		for _, c := range n.Content {
			if !d.checkTree(c, depth+1, limit) {
				ok = false
				if depth+1 > limit {
					return false
				}
			}
		}
	}
	return ok
}
