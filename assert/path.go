package assert

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/PaesslerAG/gval"
	pgjsonpath "github.com/PaesslerAG/jsonpath"
	"github.com/theory/jsonpath"
	jpspec "github.com/theory/jsonpath/spec"
)

// goessner is the older JSONPath dialect: Goessner's paths with gval expressions in filters
// (=~ regular expressions, arithmetic, `in`).
var goessner = gval.NewLanguage(gval.Full(), pgjsonpath.Language())

// ErrNoMatch reports that a JSONPath selected nothing in the document.
var ErrNoMatch = errors.New("path not found")

// Path is a compiled JSONPath expression. It is safe for concurrent use.
//
// Paths follow RFC 9535: filters with existence tests ([?@.outputSchema]), single- or
// double-quoted strings, comparisons, &&, ||, !, and the length, count, match, search and
// value functions. A path that is not RFC 9535 syntax but parses in the older Goessner
// dialect with gval expressions (for example a =~ regular expression in a filter) is
// evaluated in that dialect, so collections written for it keep working.
type Path struct {
	src string
	rfc *jsonpath.Path // nil when the path is in the Goessner dialect
	// legacy evaluates a Goessner-dialect path.
	legacy gval.Evaluable
	// multi is set when the path may select several values (wildcards, filters, slices,
	// unions, descendants); Lookup then returns a []any of the matches.
	multi bool
}

// CompilePath compiles a JSONPath expression. It must start with "$".
func CompilePath(src string) (*Path, error) {
	s := strings.TrimSpace(src)
	if !strings.HasPrefix(s, "$") {
		return nil, fmt.Errorf("JSONPath %q must start with \"$\"", src)
	}
	rfc, rerr := jsonpath.Parse(s)
	if rerr == nil {
		return &Path{src: s, rfc: rfc, multi: rfc.Query().Singular() == nil}, nil
	}
	ev, lerr := goessner.NewEvaluable(s)
	if lerr != nil {
		return nil, fmt.Errorf("invalid JSONPath %q: %v", src, strings.TrimPrefix(rerr.Error(), "jsonpath: "))
	}
	multi := strings.ContainsAny(s, "*?,:") || strings.Contains(s, "..")
	return &Path{src: s, legacy: ev, multi: multi}, nil
}

// String returns the path as written.
func (p *Path) String() string { return p.src }

// Multi reports whether the path may select several values (it then yields a []any).
func (p *Path) Multi() bool { return p.multi }

// Lookup evaluates the path against doc (as produced by [DecodeJSON]). A singular path that
// selects nothing returns an error wrapping [ErrNoMatch] that says where the path stopped
// matching; a multi-valued path that matches nothing returns an empty []any and no error.
func (p *Path) Lookup(ctx context.Context, doc any) (v any, err error) {
	defer func() {
		// The libraries evaluate user-supplied expressions; nothing they do may crash a run.
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("evaluate %s: %v", p.src, r)
		}
	}()
	if p.rfc == nil {
		return p.lookupLegacy(ctx, doc)
	}
	nodes := p.rfc.Select(doc)
	if p.multi {
		out := make([]any, len(nodes))
		copy(out, nodes)
		return out, nil
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("%s: %w (%s)", p.src, ErrNoMatch, p.Why(doc))
	}
	return nodes[0], nil
}

func (p *Path) lookupLegacy(ctx context.Context, doc any) (any, error) {
	v, err := p.legacy(ctx, doc)
	if err != nil {
		if p.multi {
			return nil, fmt.Errorf("evaluate %s: %w", p.src, err)
		}
		return nil, fmt.Errorf("%s: %w (%v)", p.src, ErrNoMatch, err)
	}
	return v, nil
}

// Why explains where the path stops selecting anything in doc: the longest prefix that still
// selects something and what its next segment found there ("$.items[0] has no member "foo";
// its members are name, title"). It returns "" when the path selects something, and a
// generic note for a Goessner-dialect path.
func (p *Path) Why(doc any) string {
	if p.rfc == nil {
		return "the path selects nothing"
	}
	segs := p.rfc.Query().Segments()
	cur := []any{doc}
	prefix := "$"
	for _, seg := range segs {
		var next []any
		for _, n := range cur {
			next = append(next, seg.Select(n, doc)...)
		}
		if len(next) == 0 {
			return prefix + " " + missing(seg, cur)
		}
		cur, prefix = next, prefix+render(seg)
	}
	return ""
}

// missing says why seg selected nothing from the nodes.
func missing(seg *jpspec.Segment, nodes []any) string {
	if len(nodes) != 1 {
		return fmt.Sprintf("selects %d values, and %s selects nothing in any of them", len(nodes), seg)
	}
	switch n := nodes[0].(type) {
	case map[string]any:
		keys := slices.Sorted(mapKeys(n))
		members := "it has no members"
		if len(keys) > 0 {
			members = "its members are " + joinCapped(keys, 12)
		}
		if name, ok := singleName(seg); ok {
			return fmt.Sprintf("has no member %q; %s", name, members)
		}
		return fmt.Sprintf("is an object where %s selects nothing; %s", seg, members)
	case []any:
		if _, ok := singleName(seg); ok {
			return fmt.Sprintf("is an array of %d elements, not an object: use an index or [*]", len(n))
		}
		return fmt.Sprintf("is an array of %d elements where %s selects nothing", len(n), seg)
	default:
		return fmt.Sprintf("is %s, where %s selects nothing", describeType(n), seg)
	}
}

// render writes a segment as a path would: .name for a plain member name, else bracketed.
func render(seg *jpspec.Segment) string {
	if name, ok := singleName(seg); ok && shorthand(name) {
		return "." + name
	}
	return seg.String()
}

// shorthand reports whether name can follow a dot in RFC 9535 (member-name-shorthand).
func shorthand(name string) bool {
	for i, r := range name {
		alpha := r == '_' || r >= 0x80 || (r|0x20 >= 'a' && r|0x20 <= 'z')
		if !alpha && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return name != ""
}

// singleName returns the member name of a segment that selects one name ('.foo', "['foo']").
func singleName(seg *jpspec.Segment) (string, bool) {
	sels := seg.Selectors()
	if len(sels) != 1 || seg.IsDescendant() {
		return "", false
	}
	if n, ok := sels[0].(jpspec.Name); ok {
		return string(n), true
	}
	return "", false
}

func mapKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func joinCapped(list []string, n int) string {
	if len(list) <= n {
		return strings.Join(list, ", ")
	}
	return strings.Join(list[:n], ", ") + " … (" + strconv.Itoa(len(list)-n) + " more)"
}

func describeType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, int, int64:
		return "a number"
	}
	return fmt.Sprintf("a %T", v)
}

// Extract evaluates a JSONPath expression against a document once; runners that evaluate the
// same path often should compile it with [CompilePath].
func Extract(ctx context.Context, doc any, path string) (any, error) {
	p, err := CompilePath(path)
	if err != nil {
		return nil, err
	}
	return p.Lookup(ctx, doc)
}
