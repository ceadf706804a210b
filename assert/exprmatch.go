package assert

import (
	"fmt"
	"regexp"
	"regexp/syntax"
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
		if re, err = b.compilePattern(pat); err != nil {
			return false, err
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

// Pattern costs, in bytes, calibrated on Go's regexp (see TestPatternCostCoversCompile): what
// parsing costs a pattern, a byte of it and a Unicode class (\pL, \PN, …, whose tables it
// copies), and what compiling and matching cost an instruction of the program, and a rune of a
// class when the pattern is anchored (Go then builds a one-pass matcher with a table per class).
const (
	patternBaseCost  = 16 << 10
	patternByteCost  = 256
	unicodeClassCost = 24 << 10
	instCost         = 320
	onePassRuneCost  = 8
)

// compilePattern compiles pat for `matches`, refusing, before it allocates, a pattern whose
// program would be over the budget: a short pattern can compile into a large program
// (".{1000}" is a thousand instructions). The compiled pattern stays for the evaluation, so
// its cost counts towards the total.
func (b *exprBudget) compilePattern(pat string) (*regexp.Regexp, error) {
	const hint = "use a shorter pattern, smaller repeat counts, or contains / startsWith for literal text"
	cost := parseCost(pat)
	if err := b.reserve("matches (compiling its pattern)", cost, 0, hint); err != nil {
		return nil, err
	}
	tree, err := syntax.Parse(pat, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("matches: %w", err)
	}
	cost += programCost(tree, anchored(tree), b.limits.MaxValueBytes+1)
	if err := b.reserve("matches (compiling its pattern)", cost, 0, hint); err != nil {
		return nil, err
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return nil, fmt.Errorf("matches: %w", err)
	}
	b.total += cost
	return re, nil
}

// parseCost estimates what parsing pat allocates.
func parseCost(pat string) int {
	return patternBaseCost + patternByteCost*len(pat) + unicodeClassCost*(strings.Count(pat, `\p`)+strings.Count(pat, `\P`))
}

// programCost estimates what compiling and matching re costs: its instructions once repeats
// are expanded, as regexp/syntax simplifies them, and for an anchored pattern the runes of each
// class it expands; it stops past limit.
func programCost(re *syntax.Regexp, anchored bool, limit int) int {
	subs := 0
	for _, s := range re.Sub {
		if subs > limit {
			return subs
		}
		subs += programCost(s, anchored, limit-subs)
	}
	switch re.Op {
	case syntax.OpLiteral:
		return instCost * max(len(re.Rune), 1)
	case syntax.OpCharClass:
		if anchored {
			return instCost + onePassRuneCost*len(re.Rune)
		}
	case syntax.OpRepeat:
		if re.Max < 0 {
			return mulCap(re.Min+1, subs) + instCost
		}
		return mulCap(re.Max, subs) + instCost*(re.Max-re.Min)
	case syntax.OpCapture, syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpAlternate:
		return subs + instCost*max(len(re.Sub), 1)
	}
	return subs + instCost
}

// anchored reports re starts at the beginning of the text (^ or \A), where Go may compile a
// one-pass matcher.
func anchored(re *syntax.Regexp) bool {
	for {
		switch re.Op {
		case syntax.OpBeginText:
			return true
		case syntax.OpConcat, syntax.OpCapture:
			if len(re.Sub) == 0 {
				return false
			}
			re = re.Sub[0]
		default:
			return false
		}
	}
}

// typeName names a value's expr type for an error message.
func typeName(v any) string {
	if v == nil {
		return "nil"
	}
	return fmt.Sprintf("%T", v)
}
