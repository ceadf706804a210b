package assert

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"time"

	"github.com/expr-lang/expr/vm/runtime"
)

// exprBudget is the per-evaluation state of the guard functions.
type exprBudget struct {
	ctx      context.Context
	limits   ExprLimits
	deadline time.Time
	steps    int
	// total is what the values computed so far measure, against MaxTotalBytes.
	total int
	// regexps caches the patterns `matches` compiled during this evaluation.
	regexps map[string]*regexp.Regexp
}

// guard is called around every closure body, "+", builtin call and collection literal: it
// counts steps, checks the clock and the context, and measures the value produced.
func (b *exprBudget) guard(v any) error {
	b.steps++
	if b.steps > b.limits.MaxSteps {
		return fmt.Errorf("%w: more than %d steps", ErrExprLimit, b.limits.MaxSteps)
	}
	if b.steps&15 == 0 {
		if err := b.checkTime(); err != nil {
			return err
		}
	}
	n := measure(v, b.limits.MaxValueBytes+1)
	if n > b.limits.MaxValueBytes {
		return fmt.Errorf("%w: a computed value exceeds %d bytes", ErrExprLimit, b.limits.MaxValueBytes)
	}
	b.total += n
	if b.total > b.limits.MaxTotalBytes {
		return fmt.Errorf("%w: computed values exceed %d bytes in total", ErrExprLimit, b.limits.MaxTotalBytes)
	}
	return nil
}

// checkTime reports the evaluation's deadline passed or its context ended.
func (b *exprBudget) checkTime() error {
	if time.Now().After(b.deadline) {
		return fmt.Errorf("%w: evaluation took longer than %s", ErrExprLimit, b.limits.Timeout)
	}
	return b.ctx.Err()
}

// reserve refuses, before anything is allocated, a call of what that would build a value of n
// bytes (as [measure] counts them; elems elements, or 0 for a string): more than MaxValueBytes,
// or more than what is left of MaxTotalBytes. The error names what and ends with hint, which
// says how to write the assertion without building the value.
func (b *exprBudget) reserve(what string, n, elems int, hint string) error {
	var over string
	switch {
	case n > b.limits.MaxValueBytes:
		over = fmt.Sprintf("the expression's memory budget of %d bytes for one value", b.limits.MaxValueBytes)
	case n > b.limits.MaxTotalBytes-b.total:
		over = fmt.Sprintf("the %d bytes left of the expression's memory budget of %d bytes",
			max(b.limits.MaxTotalBytes-b.total, 0), b.limits.MaxTotalBytes)
	default:
		return nil
	}
	size := fmt.Sprintf("%d bytes", n)
	if elems > 0 {
		size = fmt.Sprintf("%d elements (about %d bytes)", elems, n)
	}
	return fmt.Errorf("%w: %s would build %s, over %s; %s", ErrExprLimit, what, size, over, hint)
}

// add is the guarded `x + y`: it refuses a string concatenation over the budget before it
// builds it, then adds as expr does.
func (b *exprBudget) add(x, y any) (any, error) {
	if s, ok := x.(string); ok {
		if t, ok := y.(string); ok {
			if err := b.reserve("+", len(s)+len(t), 0, hintText); err != nil {
				return nil, err
			}
		}
	}
	return runtime.Add(x, y), nil
}

// each bounds the collection a map, sortBy or groupBy iterates: these build a value with one
// element per element of it (sortBy and groupBy keep two headers each).
func (b *exprBudget) each(name string, v any) (any, error) {
	n, ok := lenOf(v)
	if !ok {
		return v, nil // the builtin reports what it cannot iterate
	}
	per := headerBytes
	if name != "map" {
		per = 2 * headerBytes
	}
	if err := b.reserve(name, mulCap(per, n), n, hintList); err != nil {
		return nil, err
	}
	return v, nil
}

// headerBytes is what [measure] charges for each element of a collection besides its content:
// the string or interface header Go stores for it. A map entry costs two (key and value).
const headerBytes = 16

// measure estimates the memory v occupies, stopping once it exceeds limit.
func measure(v any, limit int) int {
	switch x := v.(type) {
	case string:
		return len(x)
	case []any:
		n := headerBytes * len(x)
		for _, e := range x {
			if n > limit {
				return n
			}
			n += measure(e, limit-n)
		}
		return n
	case map[string]any:
		n := 2 * headerBytes * len(x)
		for k, e := range x {
			if n > limit {
				return n
			}
			n += len(k) + measure(e, limit-n)
		}
		return n
	case []string:
		n := headerBytes * len(x)
		for _, e := range x {
			if n > limit {
				return n
			}
			n += len(e)
		}
		return n
	case []int:
		return 8 * len(x)
	case []float64:
		return 8 * len(x)
	case nil, bool, int, float64:
		return 8
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String:
		return rv.Len()
	case reflect.Slice, reflect.Array:
		n := headerBytes * rv.Len()
		for i := 0; i < rv.Len() && n <= limit; i++ {
			n += measure(rv.Index(i).Interface(), limit-n)
		}
		return n
	case reflect.Map:
		n := 2 * headerBytes * rv.Len()
		for it := rv.MapRange(); n <= limit && it.Next(); {
			n += measure(it.Key().Interface(), limit-n)
			n += measure(it.Value().Interface(), limit-n)
		}
		return n
	}
	return 8
}

// lenOf is the number of elements of a slice, array or map.
func lenOf(v any) (int, bool) {
	switch x := v.(type) {
	case []any:
		return len(x), true
	case map[string]any:
		return len(x), true
	case string, nil:
		return 0, false
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		return rv.Len(), true
	}
	return 0, false
}

// mulCap is a*b for non-negative a and b, capped instead of overflowing.
func mulCap(a, b int) int {
	const maxInt = int(^uint(0) >> 1)
	if a != 0 && b > maxInt/a {
		return maxInt
	}
	return a * b
}
