package collection

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ErrInvalid is matched (errors.Is) by every error list the loader returns, so callers can tell
// "the collection is wrong" (exit code 3/7) from an I/O failure.
var ErrInvalid = errors.New("invalid collection")

// Pos is a position in a collection file. Line and Column count from 1; zero means unknown.
type Pos struct {
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
}

// String renders "file:line:column", leaving out what is unknown.
func (p Pos) String() string {
	s := p.File
	if p.Line > 0 {
		s += fmt.Sprintf(":%d", p.Line)
		if p.Column > 0 {
			s += fmt.Sprintf(":%d", p.Column)
		}
	}
	return s
}

// Error is one problem in a collection, at a position, with an optional hint.
type Error struct {
	Pos Pos
	Msg string
	// Hint suggests a fix: `did you mean "assertions"?`.
	Hint string
}

// Error implements error: `file:line:col: message (hint)`.
func (e *Error) Error() string {
	s := e.Msg
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	if p := e.Pos.String(); p != "" {
		return p + ": " + s
	}
	return s
}

// ErrorList is every problem found in one or more collections, in file and position order.
type ErrorList []*Error

// Error joins the errors one per line.
func (l ErrorList) Error() string {
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// Unwrap exposes each *Error to errors.As, and ErrInvalid to errors.Is.
func (l ErrorList) Unwrap() []error {
	out := make([]error, 0, len(l)+1)
	for _, e := range l {
		out = append(out, e)
	}
	return append(out, ErrInvalid)
}

// sortErrors orders by file, line, column, keeping insertion order otherwise, and drops exact
// duplicates (the same message at the same place).
func sortErrors(l ErrorList) ErrorList {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i].Pos, l[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	out := l[:0]
	seen := map[string]bool{}
	for _, e := range l {
		k := e.Error()
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, e)
	}
	return out
}

// suggest returns `did you mean "x"?` for the candidate closest to s, if close enough.
func suggest(s string, candidates []string) string {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		d := editDistance(strings.ToLower(s), strings.ToLower(c))
		if d < bestD {
			best, bestD = c, d
		}
	}
	limit := 2
	if len(s) > 6 {
		limit = 3
	}
	if best == "" || bestD > limit {
		// a prefix or suffix relation ("assert" → "assertions") also counts
		for _, c := range candidates {
			if len(s) >= 3 && (strings.HasPrefix(c, s) || strings.HasPrefix(s, c)) && c != "" {
				return fmt.Sprintf("did you mean %q?", c)
			}
		}
		return ""
	}
	return fmt.Sprintf("did you mean %q?", best)
}

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 30
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
