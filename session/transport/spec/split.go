package spec

import (
	"fmt"
	"strings"
)

// SplitError reports a command line that cannot be split into words.
type SplitError struct {
	// Offset is the byte offset in the input where the problem was found.
	Offset int
	// Reason says what is wrong ("unterminated single quote").
	Reason string
}

// Error renders the reason and the byte offset.
func (e *SplitError) Error() string {
	return fmt.Sprintf("split command line: %s at offset %d", e.Reason, e.Offset)
}

// Split breaks a command line into words the way a POSIX shell does for a simple command, without
// any expansion:
//
//   - unquoted blanks (space, tab, newline) separate words;
//   - 'single quotes' keep everything literally, up to the next single quote;
//   - "double quotes" keep everything literally except that a backslash escapes ", \, $, ` and a
//     newline (an escaped newline is removed);
//   - outside quotes a backslash keeps the next character literally (a backslash-newline is
//     removed);
//   - adjacent quoted and unquoted parts join into one word: a'b c'"d" is the single word "ab cd";
//   - ” and "" make an empty word.
//
// $VARS, globs, ~, pipes and redirections are not interpreted: they stay in the words as typed.
// An unterminated quote or a trailing backslash is a *[SplitError].
func Split(s string) ([]string, error) {
	var (
		words  []string
		cur    strings.Builder
		inside bool // a word has started (possibly empty, from quotes)
	)
	flush := func() {
		if inside {
			words = append(words, cur.String())
			cur.Reset()
			inside = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			flush()
		case '\\':
			if i+1 >= len(s) {
				return nil, &SplitError{Offset: i, Reason: "trailing backslash"}
			}
			i++
			if s[i] == '\n' {
				continue
			}
			cur.WriteByte(s[i])
			inside = true
		case '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, &SplitError{Offset: i, Reason: "unterminated single quote"}
			}
			cur.WriteString(s[i+1 : i+1+end])
			inside = true
			i += end + 1
		case '"':
			start := i
			inside = true
			closed := false
			for i++; i < len(s); i++ {
				d := s[i]
				if d == '"' {
					closed = true
					break
				}
				if d == '\\' && i+1 < len(s) {
					switch n := s[i+1]; n {
					case '"', '\\', '$', '`':
						cur.WriteByte(n)
						i++
						continue
					case '\n':
						i++
						continue
					}
				}
				cur.WriteByte(d)
			}
			if !closed {
				return nil, &SplitError{Offset: start, Reason: "unterminated double quote"}
			}
		default:
			cur.WriteByte(c)
			inside = true
		}
	}
	flush()
	return words, nil
}

// Join quotes words so that [Split] returns them unchanged; words that need no quoting are kept
// as they are. It is meant for showing a command line to a user.
func Join(words []string) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(quote(w))
	}
	return b.String()
}

func quote(w string) string {
	if w == "" {
		return "''"
	}
	safe := true
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_./=:,+@%^", c) >= 0) {
			safe = false
			break
		}
	}
	if safe {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}
