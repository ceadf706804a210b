package assert

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/vm/runtime"
)

// Hints end a budget error: how to write the assertion without building the large value.
const (
	hintText      = "to test a large text, use contains, startsWith, matches, indexOf or len(text) instead"
	hintList      = "to test a large list or object, use any, all, count, find or len, or compare one field, instead"
	hintSerialise = "compare fields of the value instead of converting all of it"
	hintParse     = "no number, duration, date or time zone is that long: convert a short field instead"
)

// budgetedBuiltin is a builtin that builds a value as large as its arguments, or larger, before
// the guard could measure it (expr's own or one of ours: join, replace). The guard patch routes
// its calls through __builtin, which checks the cost against the budget first.
type budgetedBuiltin struct {
	// cost estimates, without allocating, what one call builds: bytes as [measure] counts them
	// and, for a collection, its elements; limit is where estimating may stop. ok is false when
	// the arguments are not what the builtin takes: its own error then stands.
	cost func(args []any, limit int) (n, elems int, ok bool)
	// call runs the builtin once its cost is within the budget; nil runs expr's own.
	call func(b *exprBudget, args []any) (any, error)
	// hint ends the error: how to write the assertion without building the value.
	hint string
}

// budgetedBuiltins returns every builtin whose result can be as large as its input or larger,
// by name. Builtins not listed allocate nothing in proportion to their input (len, trim,
// indexOf, first, take …), or are bounded by the VM's budget (ranges) or by the guard's steps
// (filter, the predicates); map, sortBy and groupBy are bounded through [exprBudget.each].
func budgetedBuiltins() map[string]budgetedBuiltin {
	// str is the cost of a builtin of one string, f of its length.
	str := func(f func(n int) int) func([]any, int) (int, int, bool) {
		return func(args []any, _ int) (int, int, bool) {
			s, ok := args[0].(string)
			return f(len(s)), 0, ok
		}
	}
	length := func(n int) int { return n }
	// Parsers copy a bad argument into their error message, once per layout or source tried.
	parsed := func(n int) int { return 8 * n }
	perElem := func(per int) func([]any, int) (int, int, bool) {
		return func(args []any, _ int) (int, int, bool) {
			n, ok := lenOf(args[0])
			return mulCap(per, n), n, ok
		}
	}
	value := func(args []any, limit int) (int, int, bool) { return measure(args[0], limit), 0, true }
	return map[string]budgetedBuiltin{
		"split":      {cost: splitCost(false), hint: hintText},
		"splitAfter": {cost: splitCost(true), hint: hintText},
		"repeat":     {cost: repeatCost, hint: "repeat a shorter string, or fewer times"},
		"replace":    {cost: replaceCost, call: replaceAll, hint: hintText},
		"join":       {cost: joinCost, call: join, hint: hintList},
		"upper":      {cost: str(length), hint: hintText},
		"lower":      {cost: str(length), hint: hintText},
		"toBase64":   {cost: str(base64.StdEncoding.EncodedLen), hint: hintText},
		"fromBase64": {cost: str(base64.StdEncoding.DecodedLen), hint: hintText},
		"fromJSON":   {cost: str(length), hint: "use response, which is decoded already, or a smaller text"},
		"string":     {cost: value, hint: hintSerialise},
		"toJSON":     {cost: value, call: toJSON, hint: hintSerialise},
		"int":        {cost: numberCost, hint: hintParse},
		"float":      {cost: numberCost, hint: hintParse},
		"duration":   {cost: str(parsed), hint: hintParse},
		"timezone":   {cost: str(parsed), hint: hintParse},
		"date":       {cost: dateCost, hint: hintParse},
		"keys":       {cost: mapCost(1), hint: hintList},
		"values":     {cost: mapCost(1), hint: hintList},
		"toPairs":    {cost: mapCost(3), hint: hintList},
		"fromPairs":  {cost: perElem(2 * headerBytes), hint: hintList},
		"reverse":    {cost: perElem(headerBytes), hint: hintList},
		"sort":       {cost: perElem(headerBytes), hint: hintList},
		"concat":     {cost: concatCost, hint: hintList},
		"flatten":    {cost: leavesCost(headerBytes), hint: hintList},
		"median":     {cost: leavesCost(8), hint: hintList},
		"uniq":       {cost: func([]any, int) (int, int, bool) { return 0, 0, true }, call: uniq, hint: hintList},
	}
}

// callBuiltin is __builtin: name's call with args, refused before it allocates when its cost
// is over the budget.
func (b *exprBudget) callBuiltin(fns map[string]budgetedBuiltin, name string, args []any) (any, error) {
	fn, ok := fns[name]
	if !ok {
		return nil, fmt.Errorf("__builtin: %s is not budgeted", name)
	}
	args = derefArgs(name, args)
	if n, elems, ok := fn.cost(args, b.limits.MaxValueBytes+1); ok {
		if err := b.reserve(name, n, elems, fn.hint); err != nil {
			return nil, err
		}
	}
	if fn.call != nil {
		return fn.call(b, args)
	}
	return stockBuiltin(name, args)
}

// derefArgs dereferences the pointer arguments of expr's builtin name, as expr's compiler does
// for a builtin's call (a *time.Location from timezone is one, except as date's first argument).
func derefArgs(name string, args []any) []any {
	i, ok := builtin.Index[name]
	if !ok {
		return args
	}
	f := builtin.Builtins[i]
	var out []any
	for i, a := range args {
		t := reflect.TypeOf(a)
		if t == nil || t.Kind() != reflect.Pointer || (f.Deref != nil && !f.Deref(i, t)) {
			continue
		}
		if out == nil {
			out = append([]any(nil), args...)
		}
		v := reflect.ValueOf(a)
		for v.Kind() == reflect.Pointer && !v.IsNil() {
			v = v.Elem()
		}
		out[i] = nil
		if v.Kind() != reflect.Pointer {
			out[i] = v.Interface()
		}
	}
	if out == nil {
		return args
	}
	return out
}

// stockBuiltin runs expr's own implementation of the builtin name.
func stockBuiltin(name string, args []any) (any, error) {
	i, ok := builtin.Index[name]
	if !ok {
		return nil, fmt.Errorf("__builtin: no builtin %s", name)
	}
	f := builtin.Builtins[i]
	switch {
	case f.Func != nil:
		return f.Func(args...)
	case f.Safe != nil:
		v, _, err := f.Safe(args...)
		return v, err
	case f.Fast != nil && len(args) == 1:
		return f.Fast(args[0]), nil
	}
	return nil, fmt.Errorf("__builtin: cannot call %s with %d arguments", name, len(args))
}

// splitCost is the size of split's (after: splitAfter's) []string: a header per piece, and the
// bytes of the pieces, which share the input's memory but count towards the value's size.
func splitCost(after bool) func([]any, int) (int, int, bool) {
	return func(args []any, _ int) (int, int, bool) {
		s, ok1 := args[0].(string)
		sep, ok2 := args[1].(string)
		if !ok1 || !ok2 || len(args) > 3 {
			return 0, 0, false
		}
		limit := -1
		if len(args) == 3 {
			var ok bool
			if limit, ok = intArg(args[2]); !ok {
				return 0, 0, false
			}
		}
		if limit == 0 {
			return 0, 0, true
		}
		pieces := strings.Count(s, sep) + 1
		if sep == "" {
			pieces = utf8.RuneCountInString(s)
		}
		if limit > 0 && limit < pieces {
			pieces = limit
		}
		n := len(s)
		if !after && sep != "" && pieces > 0 {
			n -= (pieces - 1) * len(sep)
		}
		return headerBytes*pieces + n, pieces, true
	}
}

// repeatCost is the length of repeat(s, n).
func repeatCost(args []any, _ int) (int, int, bool) {
	s, ok := args[0].(string)
	n, ok2 := intArg(args[1])
	if !ok || !ok2 || n < 0 {
		return 0, 0, false
	}
	return mulCap(len(s), n), 0, true
}

// numberCost is what int or float of a string may copy into an error message.
func numberCost(args []any, _ int) (int, int, bool) {
	if s, ok := args[0].(string); ok {
		return 8 * len(s), 0, true
	}
	return 0, 0, true
}

// dateCost is what date's parse attempts may copy into their error messages.
func dateCost(args []any, _ int) (int, int, bool) {
	n := 0
	for _, a := range args {
		if s, ok := a.(string); ok {
			n += 8 * len(s)
		}
	}
	return n, 0, true
}

// mapCost is a cost of per headers for each entry of a map (keys, values, toPairs).
func mapCost(per int) func([]any, int) (int, int, bool) {
	return func(args []any, _ int) (int, int, bool) {
		rv := reflect.ValueOf(args[0])
		if rv.Kind() != reflect.Map {
			return 0, 0, false
		}
		return mulCap(per*headerBytes, rv.Len()), rv.Len(), true
	}
}

// concatCost is a header for each element of each list concat joins.
func concatCost(args []any, _ int) (int, int, bool) {
	total := 0
	for _, a := range args {
		n, ok := lenOf(a)
		if !ok {
			return 0, 0, false
		}
		total += n
	}
	return mulCap(headerBytes, total), total, true
}

// leavesCost is per bytes for each non-list element of the nested lists in args (flatten's
// elements, median's numbers).
func leavesCost(per int) func([]any, int) (int, int, bool) {
	return func(args []any, limit int) (int, int, bool) {
		n := 0
		for _, a := range args {
			n += countLeaves(a, limit/per+1-n)
		}
		return mulCap(per, n), n, true
	}
}

// countLeaves counts the non-list values in v, nested lists included, stopping past limit.
func countLeaves(v any, limit int) int {
	switch x := v.(type) {
	case []any:
		n := 0
		for _, e := range x {
			if n > limit {
				break
			}
			n += countLeaves(e, limit-n)
		}
		return n
	case []int:
		return len(x)
	case []float64:
		return len(x)
	case []string:
		return len(x)
	case string, nil:
		return 1
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return 1
	}
	n := 0
	for i := 0; i < rv.Len() && n <= limit; i++ {
		n += countLeaves(rv.Index(i).Interface(), limit-n)
	}
	return n
}

// intArg converts a numeric argument as expr does (floats truncate).
func intArg(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case float64:
		return int(x), true
	}
	rv := reflect.ValueOf(v)
	switch {
	case rv.CanInt():
		return int(rv.Int()), true
	case rv.CanUint():
		return int(rv.Uint()), true
	case rv.CanFloat():
		return int(rv.Float()), true
	}
	return 0, false
}

// replaceCost is the length of replace(s, old, new).
func replaceCost(args []any, _ int) (int, int, bool) {
	s, ok1 := args[0].(string)
	old, ok2 := args[1].(string)
	repl, ok3 := args[2].(string)
	if !ok1 || !ok2 || !ok3 {
		return 0, 0, false
	}
	n := strings.Count(s, old)
	return len(s) + mulCap(n, len(repl)) - n*len(old), 0, true
}

// replaceAll is our replace(s, old, new): strings.ReplaceAll.
func replaceAll(_ *exprBudget, args []any) (any, error) {
	s, _ := args[0].(string)
	old, _ := args[1].(string)
	repl, _ := args[2].(string)
	return strings.ReplaceAll(s, old, repl), nil
}

// joinCost estimates join's result: the items' lengths (their measure, for non-strings) and
// the separators.
func joinCost(args []any, limit int) (int, int, bool) {
	sep, ok := sepArg(args)
	if !ok {
		return 0, 0, false
	}
	switch x := args[0].(type) {
	case []string:
		n := mulCap(max(len(x)-1, 0), len(sep))
		for _, s := range x {
			n += len(s)
		}
		return n, 0, true
	case []any:
		n := mulCap(max(len(x)-1, 0), len(sep))
		for _, it := range x {
			if n > limit {
				break
			}
			n += measure(it, limit-n)
		}
		return n, 0, true
	}
	return 0, 0, false
}

// sepArg is join's separator, "" when absent.
func sepArg(args []any) (string, bool) {
	if len(args) < 2 {
		return "", true
	}
	s, ok := args[1].(string)
	return s, ok
}

// join is our join(items, sep): the string forms of items (see [ToString]) joined by sep,
// refused once it grows over MaxValueBytes.
func join(b *exprBudget, args []any) (any, error) {
	sep, _ := sepArg(args)
	var sb strings.Builder
	add := func(i int, s string) error {
		if i > 0 {
			sb.WriteString(sep)
		}
		sb.WriteString(s)
		if sb.Len() > b.limits.MaxValueBytes {
			return b.reserve("join", sb.Len(), 0, hintList)
		}
		return nil
	}
	switch x := args[0].(type) {
	case []string:
		for i, s := range x {
			if err := add(i, s); err != nil {
				return nil, err
			}
		}
	case []any:
		for i, it := range x {
			if err := add(i, ToString(it)); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("join: cannot join %s", typeName(args[0]))
	}
	return sb.String(), nil
}

// toJSON is expr's toJSON (json.MarshalIndent with two spaces), refused before it indents when
// the indented text would be over the budget: nesting can make it far larger than the value.
func toJSON(b *exprBudget, args []any) (any, error) {
	compact, err := json.Marshal(args[0])
	if err != nil {
		return nil, err
	}
	n := indentedSize(compact, len("  "), b.limits.MaxValueBytes+1)
	if err := b.reserve("toJSON", n, 0, hintSerialise); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.Grow(n)
	if err := json.Indent(&out, compact, "", "  "); err != nil {
		return nil, err
	}
	return out.String(), nil
}

// indentedSize is the length json.Indent(dst, src, "", indent) gives src, compact JSON as
// json.Marshal writes it, with indent bytes of indentation a level; it stops past limit.
func indentedSize(src []byte, indent, limit int) int {
	n, depth := 0, 0
	inString, escaped, opened := false, false, false
	for _, c := range src {
		if n > limit {
			return n
		}
		if inString {
			n++
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if opened && c != ']' && c != '}' {
			n += 1 + depth*indent // newline after a non-empty { or [
		}
		switch c {
		case '{', '[':
			depth++
			opened = true
			n++
			continue
		case '}', ']':
			depth--
			if !opened {
				n += 1 + depth*indent
			}
			n++
		case ',':
			n += 2 + depth*indent
		case ':':
			n += 2
		case '"':
			inString = true
			n++
		default:
			n++
		}
		opened = false
	}
	return n
}

// uniq is expr's uniq (first occurrences, compared with expr's ==), with its quadratic loop
// bounded by the evaluation's time and its result by the budget as it grows.
func uniq(b *exprBudget, args []any) (any, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("invalid number of arguments (expected 1, got %d)", len(args))
	}
	v := reflect.ValueOf(args[0])
	if v.Kind() != reflect.Array && v.Kind() != reflect.Slice {
		return nil, fmt.Errorf("cannot uniq %s", v.Kind())
	}
	ret := []any{}
	compared := 0
	for i := 0; i < v.Len(); i++ {
		item := v.Index(i).Interface()
		dup := false
		for _, r := range ret {
			if compared++; compared%4096 == 0 {
				if err := b.checkTime(); err != nil {
					return nil, err
				}
			}
			if runtime.Equal(item, r) {
				dup = true
				break
			}
		}
		if !dup {
			if err := b.reserve("uniq", headerBytes*(len(ret)+1), len(ret)+1, hintList); err != nil {
				return nil, err
			}
			ret = append(ret, item)
		}
	}
	return ret, nil
}

// errNoBudget is returned by the unguarded join and replace the type-checking compile defines.
var errNoBudget = errors.New("called outside a guarded evaluation")
