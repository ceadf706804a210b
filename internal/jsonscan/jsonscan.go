package jsonscan

import (
	"errors"
	"strconv"
	"unicode/utf8"
)

// MaxDepth bounds nesting like encoding/json does.
const MaxDepth = 10000

// ErrSyntax is returned for input that is not valid JSON.
var ErrSyntax = errors.New("invalid JSON")

// IsSpace reports whether c is JSON whitespace.
func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// SkipSpace returns the index of the first byte at or after i that is not JSON whitespace.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	return i
}

// SkipValue returns the index just past the JSON value starting at b[i] (no leading space).
func SkipValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return i, ErrSyntax
	}
	switch c := b[i]; {
	case c == '"':
		end, _, err := skipString(b, i)
		return end, err
	case c == '{':
		if depth >= MaxDepth {
			return i, ErrSyntax
		}
		i = SkipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, nil
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return i, ErrSyntax
			}
			var err error
			if i, _, err = skipString(b, i); err != nil {
				return i, err
			}
			i = SkipSpace(b, i)
			if i >= len(b) || b[i] != ':' {
				return i, ErrSyntax
			}
			i = SkipSpace(b, i+1)
			if i, err = SkipValue(b, i, depth+1); err != nil {
				return i, err
			}
			i = SkipSpace(b, i)
			if i >= len(b) {
				return i, ErrSyntax
			}
			if b[i] == '}' {
				return i + 1, nil
			}
			if b[i] != ',' {
				return i, ErrSyntax
			}
			i = SkipSpace(b, i+1)
		}
	case c == '[':
		if depth >= MaxDepth {
			return i, ErrSyntax
		}
		i = SkipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, nil
		}
		for {
			var err error
			if i, err = SkipValue(b, i, depth+1); err != nil {
				return i, err
			}
			i = SkipSpace(b, i)
			if i >= len(b) {
				return i, ErrSyntax
			}
			if b[i] == ']' {
				return i + 1, nil
			}
			if b[i] != ',' {
				return i, ErrSyntax
			}
			i = SkipSpace(b, i+1)
		}
	case c == 't':
		return skipLiteral(b, i, "true")
	case c == 'f':
		return skipLiteral(b, i, "false")
	case c == 'n':
		return skipLiteral(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return skipNumber(b, i)
	}
	return i, ErrSyntax
}

func skipLiteral(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, ErrSyntax
	}
	return i + len(lit), nil
}

// IsDigit reports whether c is an ASCII digit.
func IsDigit(c byte) bool { return c >= '0' && c <= '9' }

func skipNumber(b []byte, i int) (int, error) {
	end, why := numberEnd(b, i)
	if why != "" {
		return end, ErrSyntax
	}
	return end, nil
}

// numberEnd returns the index past the number at b[i] (b[i] is '-' or a digit), or where it
// went wrong and why: "invalid number", "invalid fraction" or "invalid exponent".
func numberEnd(b []byte, i int) (int, string) {
	if b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return i, "invalid number"
	}
	switch {
	case b[i] == '0':
		i++
	case IsDigit(b[i]):
		for i < len(b) && IsDigit(b[i]) {
			i++
		}
	default:
		return i, "invalid number"
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !IsDigit(b[i]) {
			return i, "invalid fraction"
		}
		for i < len(b) && IsDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !IsDigit(b[i]) {
			return i, "invalid exponent"
		}
		for i < len(b) && IsDigit(b[i]) {
			i++
		}
	}
	return i, ""
}

func isHex(c byte) bool {
	return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// skipString returns the index past the string token at b[i] (b[i] == '"') and whether it
// holds escapes. It rejects control characters and bad escapes; UTF-8 is checked by the caller.
func skipString(b []byte, i int) (int, bool, error) {
	escaped := false
	i++
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			return i + 1, escaped, nil
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return i, escaped, ErrSyntax
			}
			if _, ok := simpleEscape(b[i+1]); ok {
				i += 2
				continue
			}
			switch b[i+1] {
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return i, escaped, ErrSyntax
				}
				i += 6
			default:
				return i, escaped, ErrSyntax
			}
		case c < 0x20:
			return i, escaped, ErrSyntax
		default:
			i++
		}
	}
	return i, escaped, ErrSyntax
}

// Unquote decodes a string token (quotes included). Tokens without escapes take a fast path.
func Unquote(tok []byte) (string, bool) {
	if len(tok) < 2 || tok[0] != '"' || tok[len(tok)-1] != '"' {
		return "", false
	}
	inner := tok[1 : len(tok)-1]
	esc := false
	for _, c := range inner {
		if c == '\\' {
			esc = true
			break
		}
	}
	if !esc {
		return string(inner), true
	}
	return unescape(inner)
}

func unescape(in []byte) (string, bool) {
	out := make([]byte, 0, len(in))
	for i := 0; i < len(in); {
		c := in[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(in) {
			return "", false
		}
		if e, ok := simpleEscape(in[i+1]); ok {
			out = append(out, e)
			i += 2
			continue
		}
		r, n, _, ok := unicodeEscape(in, i)
		if !ok {
			return "", false
		}
		out = utf8.AppendRune(out, r)
		i += n
	}
	return string(out), true
}

// simpleEscape returns the byte a one-letter escape (the letter after the backslash) stands
// for; ok is false for 'u' and anything that is not an escape.
func simpleEscape(e byte) (byte, bool) {
	switch e {
	case '"', '\\', '/':
		return e, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}

// unicodeEscape decodes the \uXXXX escape at b[i] and, for a high surrogate, the low one
// that follows it. It returns the rune (U+FFFD for a surrogate without its partner), how
// many bytes it spans, whether the surrogate was lone, and ok false when b[i:] is not a
// \u escape with four hex digits.
func unicodeEscape(b []byte, i int) (r rune, n int, lone, ok bool) {
	hex4 := func(at int) (rune, bool) {
		if at+6 > len(b) || b[at] != '\\' || b[at+1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(string(b[at+2:at+6]), 16, 16)
		return rune(v), err == nil
	}
	r, ok = hex4(i)
	switch {
	case !ok:
		return 0, 0, false, false
	case r >= 0xD800 && r < 0xDC00:
		if lo, ok := hex4(i + 6); ok && lo >= 0xDC00 && lo < 0xE000 {
			return 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00), 12, false, true
		}
		return utf8.RuneError, 6, true, true
	case r >= 0xDC00 && r < 0xE000:
		return utf8.RuneError, 6, true, true
	}
	return r, 6, false, true
}

// EachMember calls fn for every member of the object b (already validated or not), with the
// raw key token (quotes included) and the raw value. It stops at the first syntax error.
func EachMember(b []byte, fn func(key, val []byte)) error {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return ErrSyntax
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		if SkipSpace(b, i+1) != len(b) {
			return ErrSyntax
		}
		return nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return ErrSyntax
		}
		ks := i
		var err error
		if i, _, err = skipString(b, i); err != nil {
			return err
		}
		key := b[ks:i]
		i = SkipSpace(b, i)
		if i >= len(b) || b[i] != ':' {
			return ErrSyntax
		}
		i = SkipSpace(b, i+1)
		vs := i
		if i, err = SkipValue(b, i, 1); err != nil {
			return err
		}
		fn(key, b[vs:i])
		i = SkipSpace(b, i)
		if i >= len(b) {
			return ErrSyntax
		}
		if b[i] == '}' {
			if SkipSpace(b, i+1) != len(b) {
				return ErrSyntax
			}
			return nil
		}
		if b[i] != ',' {
			return ErrSyntax
		}
		i = SkipSpace(b, i+1)
	}
}

// EachElement calls fn for every element of the array b.
func EachElement(b []byte, fn func(val []byte)) error {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return ErrSyntax
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return nil
	}
	for {
		vs := i
		var err error
		if i, err = SkipValue(b, i, 1); err != nil {
			return err
		}
		fn(b[vs:i])
		i = SkipSpace(b, i)
		if i >= len(b) {
			return ErrSyntax
		}
		if b[i] == ']' {
			return nil
		}
		if b[i] != ',' {
			return ErrSyntax
		}
		i = SkipSpace(b, i+1)
	}
}

// KeyIs reports whether the raw key token equals name (a plain ASCII name), decoding escapes
// only when the token has some.
func KeyIs(tok []byte, name string) bool {
	if len(tok) == len(name)+2 && string(tok[1:len(tok)-1]) == name {
		return true
	}
	if len(tok) <= len(name)+2 {
		return false
	}
	for _, c := range tok {
		if c == '\\' {
			s, ok := Unquote(tok)
			return ok && s == name
		}
	}
	return false
}

// ParseInt parses a raw JSON number that is a plain integer fitting int64.
func ParseInt(raw []byte) (int64, bool) {
	if len(raw) == 0 || len(raw) > 20 {
		return 0, false
	}
	neg := raw[0] == '-'
	d := raw
	if neg {
		d = raw[1:]
	}
	if len(d) == 0 || (d[0] == '0' && len(d) > 1) {
		return 0, false
	}
	var n uint64
	for _, c := range d {
		if !IsDigit(c) {
			return 0, false
		}
		dig := uint64(c - '0')
		if n > (1<<64-1-dig)/10 {
			return 0, false
		}
		n = n*10 + dig
	}
	if neg {
		if n > 1<<63 {
			return 0, false
		}
		return -int64(n), true
	}
	if n > 1<<63-1 {
		return 0, false
	}
	return int64(n), true
}

// ValidUTF8 replaces each byte of s that is not part of valid UTF-8 by U+FFFD, one per byte, as
// encoding/json does when it decodes a string (strings.ToValidUTF8 replaces a whole run by one).
func ValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	out := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, s[i:i+n]...)
		}
		i += n
	}
	return string(out)
}
