package assert

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/PaesslerAG/gval"
	"github.com/PaesslerAG/jsonpath"
)

// ErrNoMatch reports that a JSONPath selected nothing in the document.
var ErrNoMatch = errors.New("path not found")

// Path is a compiled JSONPath expression. It is safe for concurrent use.
type Path struct {
	src  string
	eval gval.Evaluable
	// multi is set when the path may select several values (wildcards, filters, slices,
	// unions, recursive descent); Lookup then returns a []any of the matches.
	multi bool
}

// CompilePath compiles a JSONPath expression. It must start with "$".
func CompilePath(src string) (*Path, error) {
	s := strings.TrimSpace(src)
	if !strings.HasPrefix(s, "$") {
		return nil, fmt.Errorf("JSONPath %q must start with \"$\"", src)
	}
	ev, err := jsonpath.New(s)
	if err != nil {
		return nil, fmt.Errorf("invalid JSONPath %q: %w", src, err)
	}
	multi := strings.ContainsAny(s, "*?,:") || strings.Contains(s, "..")
	return &Path{src: s, eval: ev, multi: multi}, nil
}

// String returns the path as written.
func (p *Path) String() string { return p.src }

// Multi reports whether the path may select several values (it then yields a []any).
func (p *Path) Multi() bool { return p.multi }

// Lookup evaluates the path against doc (as produced by [DecodeJSON]). A path that selects
// nothing returns an error wrapping [ErrNoMatch]; a multi-valued path that matches nothing
// returns an empty []any and no error.
func (p *Path) Lookup(ctx context.Context, doc any) (v any, err error) {
	defer func() {
		// The library evaluates user-supplied scripts; nothing it does may crash a run.
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("evaluate %s: %v", p.src, r)
		}
	}()
	v, err = p.eval(ctx, doc)
	if err != nil {
		if p.multi {
			return nil, fmt.Errorf("evaluate %s: %w", p.src, err)
		}
		return nil, fmt.Errorf("%s: %w (%v)", p.src, ErrNoMatch, err)
	}
	return v, nil
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
