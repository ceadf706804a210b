package assert

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/result"
)

// failure builds a result.Failure whose message names the path, the expectation and the value.
func failure(assertion, path, expected, actual, format string, args ...any) *result.Failure {
	return &result.Failure{
		Assertion: assertion,
		Path:      path,
		Expected:  expected,
		Actual:    actual,
		Message:   fmt.Sprintf(format, args...),
	}
}

// at evaluates p against the subject; a nil p means the whole document. A path that selects
// nothing yields a Failure quoting an excerpt of the response.
func at(ctx context.Context, assertion string, p *Path, s *Subject) (any, *result.Failure) {
	if p == nil {
		return s.Doc, nil
	}
	v, err := p.Lookup(ctx, s.Doc)
	// A list step's document is {items}: $.tools[*].name selects an empty [] there, never a
	// value, so it is reported as not found with the hint rather than as "got []".
	if hint := listHint(s.Kind, p.String()); err != nil || hint != "" {
		if hint == "" {
			hint = whyNote(p, s.Doc)
		}
		return nil, failure(assertion, p.String(), "", "",
			"%s: path not found%s in response %s", p.String(), hint, Excerpt(s.Doc, maxResponse))
	}
	return v, nil
}

// whyNote is " (where the path stops matching)" for a path that selects nothing in doc, or "".
func whyNote(p *Path, doc any) string {
	if why := p.Why(doc); why != "" {
		return " (" + why + ")"
	}
	return ""
}

// listFields are the array fields of the list results a list step merges into {items}.
var listFields = []string{"tools", "resources", "prompts", "resourceTemplates"}

// listHint explains, when a list step's path names the protocol's own field ($.tools…), that
// the step's result is {items: [...]} with every page merged; "" otherwise.
func listHint(kind, path string) string {
	if kind != KindList {
		return ""
	}
	for _, f := range listFields {
		rest, ok := strings.CutPrefix(path, "$."+f)
		if ok && (rest == "" || strings.ContainsAny(rest[:1], ".[")) {
			return fmt.Sprintf(" (a list step's result is {items: [...]}, every page merged: write $.items%s, not %s)", rest, path)
		}
	}
	return ""
}

// optPath compiles a path that may be empty.
func optPath(spec *Spec) (*Path, error) {
	if spec.Path == "" {
		return nil, nil
	}
	p, err := CompilePath(spec.Path)
	if err != nil {
		return nil, &SpecError{Field: "path", Err: err}
	}
	return p, nil
}

// label names what an assertion looked at: the path, or a description when there is none.
func label(p *Path, none string) string {
	if p == nil {
		return none
	}
	return p.String()
}

type equalsChecker struct {
	path  *Path
	value any
}

func compileEquals(spec *Spec, _ *CompileOptions) (Checker, error) {
	p, err := optPath(spec)
	if err != nil {
		return nil, err
	}
	return &equalsChecker{path: p, value: spec.Value}, nil
}

func (c *equalsChecker) Check(ctx context.Context, s *Subject) *result.Failure {
	got, f := at(ctx, "equals", c.path, s)
	if f != nil {
		return f
	}
	want, err := s.expand(c.value)
	if err != nil {
		return failure("equals", c.path.String(), "", "", "%s: expected value: %v", c.path, err)
	}
	if Equal(got, want) {
		return nil
	}
	w, g := Excerpt(want, maxActual), Excerpt(got, maxActual)
	return failure("equals", c.path.String(), w, g, "%s: expected %s, got %s", c.path, w, g)
}

type containsChecker struct {
	path  *Path
	value any
}

func compileContains(spec *Spec, _ *CompileOptions) (Checker, error) {
	p, err := optPath(spec)
	if err != nil {
		return nil, err
	}
	return &containsChecker{path: p, value: spec.Value}, nil
}

func (c *containsChecker) Check(ctx context.Context, s *Subject) *result.Failure {
	var got any
	if c.path == nil {
		got = s.Text()
	} else {
		var f *result.Failure
		if got, f = at(ctx, "contains", c.path, s); f != nil {
			return f
		}
	}
	want, err := s.expand(c.value)
	if err != nil {
		return failure("contains", label(c.path, ""), "", "", "expected value: %v", err)
	}
	where := label(c.path, "response text")
	switch g := Normalize(got).(type) {
	case string:
		ws := ToString(want)
		if strings.Contains(g, ws) {
			return nil
		}
		return failure("contains", label(c.path, ""), fmt.Sprintf("contains %q", ws), truncate(g, maxActual),
			"%s: expected a string containing %q, got %q", where, ws, truncate(g, maxActual))
	case []any:
		for _, e := range g {
			if Equal(e, want) {
				return nil
			}
		}
		w := Excerpt(want, maxActual)
		return failure("contains", label(c.path, ""), "element "+w, Excerpt(g, maxActual),
			"%s: expected an array with element %s, got %s", where, w, Excerpt(g, maxActual))
	case map[string]any:
		k := ToString(want)
		if _, ok := g[k]; ok {
			return nil
		}
		keys := slices.Sorted(maps.Keys(g))
		return failure("contains", label(c.path, ""), "key "+k, fmt.Sprint(keys),
			"%s: expected an object with key %q, got keys %v", where, k, keys)
	default:
		return failure("contains", label(c.path, ""), "a string, array or object", TypeName(got),
			"%s: expected a string, array or object, got %s %s", where, TypeName(got), Excerpt(got, maxActual))
	}
}

type existsChecker struct {
	path *Path
	want bool
}

func compileExists(want bool) func(*Spec, *CompileOptions) (Checker, error) {
	return func(spec *Spec, _ *CompileOptions) (Checker, error) {
		p, err := CompilePath(spec.Path)
		if err != nil {
			return nil, &SpecError{Field: "path", Err: err}
		}
		return &existsChecker{path: p, want: want}, nil
	}
}

func (c *existsChecker) Check(ctx context.Context, s *Subject) *result.Failure {
	v, err := c.path.Lookup(ctx, s.Doc)
	found := err == nil
	if found && c.path.Multi() {
		if arr, ok := v.([]any); ok && len(arr) == 0 {
			found = false
		}
	}
	switch {
	case found == c.want:
		return nil
	case c.want:
		return failure("exists", c.path.String(), "present", "absent",
			"%s: expected the path to exist%s; response %s", c.path, whyNote(c.path, s.Doc), Excerpt(s.Doc, maxResponse))
	default:
		return failure("notExists", c.path.String(), "absent", Excerpt(v, maxActual),
			"%s: expected the path not to exist, found %s", c.path, Excerpt(v, maxActual))
	}
}

type matchesChecker struct {
	path *Path
	re   *regexp.Regexp // nil when the pattern has variables: compiled at check time
	src  string
}

func compileMatches(spec *Spec, _ *CompileOptions) (Checker, error) {
	p, err := optPath(spec)
	if err != nil {
		return nil, err
	}
	c := &matchesChecker{path: p, src: spec.Pattern}
	if strings.Contains(spec.Pattern, "{{") {
		return c, nil
	}
	if c.re, err = regexp.Compile(spec.Pattern); err != nil {
		return nil, &SpecError{Field: "pattern", Err: fmt.Errorf("invalid regular expression: %w", err)}
	}
	return c, nil
}

func (c *matchesChecker) Check(ctx context.Context, s *Subject) *result.Failure {
	var got any
	if c.path == nil {
		got = s.Text()
	} else {
		var f *result.Failure
		if got, f = at(ctx, "matches", c.path, s); f != nil {
			return f
		}
	}
	re := c.re
	if re == nil {
		src, err := s.expand(c.src)
		if err == nil {
			re, err = regexp.Compile(ToString(src))
		}
		if err != nil {
			return failure("matches", label(c.path, ""), c.src, "", "pattern %q: %v", c.src, err)
		}
	}
	where := label(c.path, "response text")
	str, ok := Normalize(got).(string)
	if !ok {
		return failure("matches", label(c.path, ""), "a string matching "+re.String(), TypeName(got),
			"%s: expected a string matching /%s/, got %s %s", where, re, TypeName(got), Excerpt(got, maxActual))
	}
	if re.MatchString(str) {
		return nil
	}
	return failure("matches", label(c.path, ""), "/"+re.String()+"/", truncate(str, maxActual),
		"%s: %q does not match /%s/", where, truncate(str, maxActual), re)
}

// jsonTypes are the names the type assertion accepts.
var jsonTypes = []string{"string", "number", "integer", "boolean", "array", "object", "null"}

type typeChecker struct {
	path *Path
	want string
}

func compileType(spec *Spec, _ *CompileOptions) (Checker, error) {
	p, err := CompilePath(spec.Path)
	if err != nil {
		return nil, &SpecError{Field: "path", Err: err}
	}
	if !contains(jsonTypes, spec.Expected) {
		return nil, fieldErr("expected", "unknown type %q (one of %s)", spec.Expected, strings.Join(jsonTypes, ", "))
	}
	return &typeChecker{path: p, want: spec.Expected}, nil
}

func (c *typeChecker) Check(ctx context.Context, s *Subject) *result.Failure {
	got, f := at(ctx, "type", c.path, s)
	if f != nil {
		return f
	}
	name := TypeName(got)
	if name == c.want || (c.want == "integer" && name == "number" && isInteger(got)) {
		return nil
	}
	return failure("type", c.path.String(), c.want, name,
		"%s: expected %s, got %s %s", c.path, c.want, name, Excerpt(got, maxActual))
}

// operators maps length operator names to their comparison.
var operators = map[string]func(a, b int) bool{
	"eq":  func(a, b int) bool { return a == b },
	"ne":  func(a, b int) bool { return a != b },
	"gt":  func(a, b int) bool { return a > b },
	"gte": func(a, b int) bool { return a >= b },
	"lt":  func(a, b int) bool { return a < b },
	"lte": func(a, b int) bool { return a <= b },
}

// operatorSymbols renders operators in messages.
var operatorSymbols = map[string]string{"eq": "==", "ne": "!=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}

type lengthChecker struct {
	path *Path
	op   string
	n    int
}

func compileLength(spec *Spec, _ *CompileOptions) (Checker, error) {
	p, err := CompilePath(spec.Path)
	if err != nil {
		return nil, &SpecError{Field: "path", Err: err}
	}
	op := spec.Operator
	if op == "" {
		op = "eq"
	}
	if _, ok := operators[op]; !ok {
		return nil, fieldErr("operator", "unknown operator %q (one of eq, ne, gt, gte, lt, lte)", op)
	}
	f, ok := toFloat(spec.Value)
	if !ok || !isInteger(f) || f < 0 {
		return nil, fieldErr("value", "length value must be a non-negative integer, got %s", Excerpt(spec.Value, 64))
	}
	return &lengthChecker{path: p, op: op, n: int(f)}, nil
}

func (c *lengthChecker) Check(ctx context.Context, s *Subject) *result.Failure {
	got, f := at(ctx, "length", c.path, s)
	if f != nil {
		return f
	}
	want := fmt.Sprintf("length %s %d", operatorSymbols[c.op], c.n)
	n, ok := lengthOf(got)
	if !ok {
		return failure("length", c.path.String(), want, TypeName(got),
			"%s: expected a string, array or object with %s, got %s %s", c.path, want, TypeName(got), Excerpt(got, maxActual))
	}
	if operators[c.op](n, c.n) {
		return nil
	}
	return failure("length", c.path.String(), want, fmt.Sprintf("length %d", n),
		"%s: expected %s, got length %d: %s", c.path, want, n, Excerpt(got, maxActual))
}

type latencyChecker struct{ max time.Duration }

func compileLatency(spec *Spec, _ *CompileOptions) (Checker, error) {
	if !spec.Has("maxMs") && !spec.Has("max") {
		return nil, fieldErr("", "latency assertion needs maxMs (milliseconds) or max (a duration)")
	}
	if spec.Has("maxMs") && spec.Has("max") {
		return nil, fieldErr("max", "give maxMs or max, not both")
	}
	if spec.Max <= 0 {
		return nil, fieldErr("", "latency bound must be positive")
	}
	return &latencyChecker{max: spec.Max}, nil
}

func (c *latencyChecker) Check(_ context.Context, s *Subject) *result.Failure {
	if s.Latency <= c.max {
		return nil
	}
	return failure("latency", "", "<= "+c.max.String(), s.Latency.String(),
		"latency %s exceeds the maximum %s", s.Latency, c.max)
}

type mimeChecker struct{ want string }

func compileMimeType(spec *Spec, _ *CompileOptions) (Checker, error) {
	if !strings.Contains(spec.Expected, "/") {
		return nil, fieldErr("expected", "%q is not a MIME type (type/subtype)", spec.Expected)
	}
	return &mimeChecker{want: strings.ToLower(spec.Expected)}, nil
}

func (c *mimeChecker) Check(_ context.Context, s *Subject) *result.Failure {
	got := s.mimeTypes()
	for _, mt := range got {
		mt = strings.ToLower(strings.TrimSpace(strings.SplitN(mt, ";", 2)[0]))
		if mt == c.want || (strings.HasSuffix(c.want, "/*") && strings.HasPrefix(mt, strings.TrimSuffix(c.want, "*"))) {
			return nil
		}
	}
	return failure("mimeType", "", c.want, strings.Join(got, ", "),
		"expected a content item with MIME type %s, got %v", c.want, got)
}

type isErrorChecker struct{ want bool }

func compileIsError(spec *Spec, _ *CompileOptions) (Checker, error) {
	want := true
	if spec.Has("value") {
		b, ok := spec.Value.(bool)
		if !ok {
			return nil, fieldErr("value", "isError value must be true or false, got %s", Excerpt(spec.Value, 64))
		}
		want = b
	}
	return &isErrorChecker{want: want}, nil
}

func (c *isErrorChecker) Check(_ context.Context, s *Subject) *result.Failure {
	got := s.IsError()
	if got == c.want {
		return nil
	}
	return failure("isError", "$.isError", fmt.Sprint(c.want), fmt.Sprint(got),
		"expected isError %v, got %v: %s", c.want, got, truncate(s.Text(), maxActual))
}
