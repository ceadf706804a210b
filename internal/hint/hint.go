// Package hint attaches the user's next step to an error, so the hint travels with the error
// and no layer derives it again. One layer writes a hint ([With]); the layer that shows the
// error reads every hint on its chain ([Of]).
package hint

import (
	"errors"
	"strings"
)

// Hinter is implemented by errors that carry a hint: what the user should do next.
type Hinter interface {
	Hint() string
}

// hinted is an error with a hint attached.
type hinted struct {
	err  error
	hint string
}

func (h *hinted) Error() string { return h.err.Error() }
func (h *hinted) Unwrap() error { return h.err }
func (h *hinted) Hint() string  { return h.hint }

// With returns err with hint attached; it returns err itself when hint is empty and nil when
// err is nil. The message stays err's.
func With(err error, hint string) error {
	if err == nil || hint == "" {
		return err
	}
	return &hinted{err: err, hint: hint}
}

// Of returns the hints on err's chain (every [Hinter] found by unwrapping, joined trees
// included), outermost first, each once, joined like [Join].
func Of(err error) string {
	var hints []string
	walk(err, func(e error) {
		if h, ok := e.(Hinter); ok {
			hints = append(hints, h.Hint())
		}
	})
	return Join(hints...)
}

// walk calls fn for err and every error it wraps, depth first.
func walk(err error, fn func(error)) {
	for err != nil {
		fn(err)
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e, fn)
			}
			return
		default:
			err = errors.Unwrap(err)
		}
	}
}

// Join joins the non-empty hints with "; ", each distinct hint once, in order.
func Join(hints ...string) string {
	var out []string
	for _, h := range hints {
		if h != "" && !contains(out, h) {
			out = append(out, h)
		}
	}
	return strings.Join(out, "; ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
