package assert

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// matchCheckEvery is how many runes an expression's `matches` reads between clock checks: a
// regexp's cost per rune grows with the pattern (RE2 simulates its automaton), so one match of
// a large pattern over a long string could otherwise outlast the time limit many times over
// between two guard steps.
const matchCheckEvery = 1024

// deadlineReader feeds a string to a regexp rune by rune and ends the input early once the
// deadline has passed (the match then finishes at once; the caller reports the limit).
type deadlineReader struct {
	r        strings.Reader
	deadline time.Time
	n        int
	expired  bool
}

// ReadRune implements io.RuneReader.
func (d *deadlineReader) ReadRune() (rune, int, error) {
	if d.n++; d.n%matchCheckEvery == 0 && time.Now().After(d.deadline) {
		d.expired = true
		return 0, 0, errDeadlineInput
	}
	return d.r.ReadRune()
}

// errDeadlineInput ends a regexp's input when the expression's time is up.
var errDeadlineInput = fmt.Errorf("%w: time is up", ErrExprLimit)

// match is the guarded `s matches pattern`: the pattern is compiled once per evaluation and the
// match stops when the evaluation's deadline passes.
func (b *exprBudget) match(s, pattern any) (bool, error) {
	str, ok := s.(string)
	if !ok {
		return false, fmt.Errorf("matches: the left side is %s, not a string", typeName(s))
	}
	pat, ok := pattern.(string)
	if !ok {
		return false, fmt.Errorf("matches: the pattern is %s, not a string", typeName(pattern))
	}
	re, ok := b.regexps[pat]
	if !ok {
		var err error
		if re, err = regexp.Compile(pat); err != nil {
			return false, fmt.Errorf("matches: %w", err)
		}
		if b.regexps == nil {
			b.regexps = map[string]*regexp.Regexp{}
		}
		b.regexps[pat] = re
	}
	in := &deadlineReader{deadline: b.deadline}
	in.r.Reset(str)
	matched := re.MatchReader(in)
	if in.expired {
		return false, fmt.Errorf("%w: evaluation took longer than %s", ErrExprLimit, b.limits.Timeout)
	}
	return matched, nil
}

// typeName names a value's expr type for an error message.
func typeName(v any) string {
	if v == nil {
		return "nil"
	}
	return fmt.Sprintf("%T", v)
}
