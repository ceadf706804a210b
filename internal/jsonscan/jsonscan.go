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
	if b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return i, ErrSyntax
	}
	switch {
	case b[i] == '0':
		i++
	case IsDigit(b[i]):
		for i < len(b) && IsDigit(b[i]) {
			i++
		}
	default:
		return i, ErrSyntax
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !IsDigit(b[i]) {
			return i, ErrSyntax
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
			return i, ErrSyntax
		}
		for i < len(b) && IsDigit(b[i]) {
			i++
		}
	}
	return i, nil
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
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
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
		switch in[i+1] {
		case '"', '\\', '/':
			out = append(out, in[i+1])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if i+6 > len(in) {
				return "", false
			}
			r, err := strconv.ParseUint(string(in[i+2:i+6]), 16, 32)
			if err != nil {
				return "", false
			}
			i += 6
			if utf16IsSurrogate(rune(r)) {
				// A high surrogate followed by a low one makes one rune; anything else is U+FFFD.
				if i+6 <= len(in) && in[i] == '\\' && in[i+1] == 'u' {
					if r2, err := strconv.ParseUint(string(in[i+2:i+6]), 16, 32); err == nil {
						if dec := utf16Decode(rune(r), rune(r2)); dec != utf8.RuneError {
							out = utf8.AppendRune(out, dec)
							i += 6
							continue
						}
					}
				}
				out = utf8.AppendRune(out, utf8.RuneError)
				continue
			}
			out = utf8.AppendRune(out, rune(r))
			continue
		default:
			return "", false
		}
		i += 2
	}
	return string(out), true
}

func utf16IsSurrogate(r rune) bool { return r >= 0xd800 && r < 0xe000 }

func utf16Decode(r1, r2 rune) rune {
	if r1 >= 0xd800 && r1 < 0xdc00 && r2 >= 0xdc00 && r2 < 0xe000 {
		return (r1-0xd800)<<10 | (r2 - 0xdc00) + 0x10000
	}
	return utf8.RuneError
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
