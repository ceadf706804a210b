package mutate

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// scanInfo is what [scanJSON] learns about one JSON text.
type scanInfo struct {
	// depth is the deepest nesting of arrays and objects (a top-level object is depth 1).
	depth int
	// dupKey is set when an object repeats a member name (RFC 8259 §4: names SHOULD be unique).
	dupKey bool
	// loneSurrogate is set when a string escapes a UTF-16 surrogate that has no partner
	// (RFC 8259 §8.2: such strings may be handled unpredictably).
	loneSurrogate bool
}

// errNotJSON is wrapped by every error of [scanJSON].
var errNotJSON = errors.New("not JSON")

// scanJSON checks that b is exactly one JSON value (RFC 8259) with only whitespace around it
// and reports its nesting depth and whether member names repeat. It never recurses, so any
// depth is safe, and never panics.
func scanJSON(b []byte) (scanInfo, error) {
	var info scanInfo
	s := scanner{b: b}
	s.space()
	if err := s.value(&info); err != nil {
		return info, err
	}
	s.space()
	if s.i != len(b) {
		return info, s.fail("trailing data after the value")
	}
	return info, nil
}

type scanner struct {
	b []byte
	i int
}

func (s *scanner) fail(format string, args ...any) error {
	return fmt.Errorf("%w: at byte %d: %s", errNotJSON, s.i, fmt.Sprintf(format, args...))
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// frame is one open container of the iterative walk. An object's member names are kept in a
// slice while few, in a map past that.
type frame struct {
	object bool
	keys   []string
	many   map[string]struct{}
}

// fewKeys is how many member names an object keeps in its slice.
const fewKeys = 16

// seen records name and reports whether the object already had it.
func (f *frame) seen(name string) bool {
	if f.many != nil {
		_, dup := f.many[name]
		f.many[name] = struct{}{}
		return dup
	}
	for _, k := range f.keys {
		if k == name {
			return true
		}
	}
	if len(f.keys) < fewKeys {
		f.keys = append(f.keys, name)
		return false
	}
	f.many = make(map[string]struct{}, 2*fewKeys)
	for _, k := range f.keys {
		f.many[k] = struct{}{}
	}
	f.many[name] = struct{}{}
	f.keys = nil
	return false
}

// value scans one value, containers included, with an explicit stack.
func (s *scanner) value(info *scanInfo) error {
	var stack []frame
	for {
		// Expect a value.
		s.space()
		if s.i >= len(s.b) {
			return s.fail("unexpected end of input")
		}
		switch c := s.b[s.i]; {
		case c == '{' || c == '[':
			s.i++
			stack = append(stack, frame{object: c == '{'})
			info.depth = max(info.depth, len(stack))
			s.space()
			closer := byte(']')
			if c == '{' {
				closer = '}'
			}
			if s.i < len(s.b) && s.b[s.i] == closer {
				s.i++
				stack = stack[:len(stack)-1]
				break
			}
			if c == '{' {
				if err := s.key(&stack[len(stack)-1], info); err != nil {
					return err
				}
			}
			continue
		case c == '"':
			if _, err := s.str(info, false); err != nil {
				return err
			}
		case c == 't':
			if err := s.lit("true"); err != nil {
				return err
			}
		case c == 'f':
			if err := s.lit("false"); err != nil {
				return err
			}
		case c == 'n':
			if err := s.lit("null"); err != nil {
				return err
			}
		case c == '-' || (c >= '0' && c <= '9'):
			if err := s.number(); err != nil {
				return err
			}
		default:
			return s.fail("unexpected character %q", c)
		}
		// A value ended: close containers or move to the next element.
		for {
			if len(stack) == 0 {
				return nil
			}
			top := &stack[len(stack)-1]
			s.space()
			if s.i >= len(s.b) {
				return s.fail("unexpected end of input inside a container")
			}
			c := s.b[s.i]
			if c == ',' {
				s.i++
				if top.object {
					if err := s.key(top, info); err != nil {
						return err
					}
				}
				break
			}
			if (top.object && c == '}') || (!top.object && c == ']') {
				s.i++
				stack = stack[:len(stack)-1]
				continue
			}
			return s.fail("expected ',' or the end of the container, got %q", c)
		}
	}
}

// key scans `"name":` and records the name in the object's set.
func (s *scanner) key(f *frame, info *scanInfo) error {
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return s.fail("expected a member name")
	}
	name, err := s.str(info, true)
	if err != nil {
		return err
	}
	if f.seen(name) {
		info.dupKey = true
	}
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		return s.fail("expected ':' after a member name")
	}
	s.i++
	return nil
}

func (s *scanner) lit(word string) error {
	if !bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		return s.fail("invalid literal")
	}
	s.i += len(word)
	return nil
}

func (s *scanner) number() error {
	start := s.i
	if s.b[s.i] == '-' {
		s.i++
	}
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.i < len(s.b) && s.b[s.i] == '0' {
		s.i++
	} else if digits() == 0 {
		return s.fail("invalid number")
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return s.fail("invalid fraction")
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return s.fail("invalid exponent")
		}
	}
	if s.i == start {
		return s.fail("invalid number")
	}
	return nil
}

// str scans a string token and, when decode is set, returns its decoded value (lone
// surrogates as U+FFFD).
func (s *scanner) str(info *scanInfo, decode bool) (string, error) {
	s.i++ // the opening quote
	start := s.i
	var out []byte
	escaped := false
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			if !decode {
				return "", nil
			}
			if !escaped {
				return string(s.b[start : s.i-1]), nil
			}
			return string(out), nil
		case c < 0x20:
			return "", s.fail("unescaped control character 0x%02x in a string", c)
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return "", s.fail("unfinished escape")
			}
			if !escaped && decode {
				out = append(out, s.b[start:s.i]...)
			}
			escaped = true
			e := s.b[s.i+1]
			switch e {
			case '"', '\\', '/':
				out = append(out, e)
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
				r, n, err := s.unicodeEscape(info)
				if err != nil {
					return "", err
				}
				out = utf8.AppendRune(out, r)
				s.i += n
				continue
			default:
				return "", s.fail("invalid escape \\%c", e)
			}
			s.i += 2
		case c < utf8.RuneSelf:
			if escaped && decode {
				out = append(out, c)
			}
			s.i++
		default:
			r, n := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && n <= 1 {
				return "", s.fail("invalid UTF-8")
			}
			if escaped && decode {
				out = append(out, s.b[s.i:s.i+n]...)
			}
			s.i += n
		}
	}
	return "", s.fail("unterminated string")
}

// unicodeEscape decodes \uXXXX (and a following low surrogate) at s.i; it returns the rune
// and how many bytes it spans.
func (s *scanner) unicodeEscape(info *scanInfo) (rune, int, error) {
	hex4 := func(at int) (rune, bool) {
		if at+6 > len(s.b) || s.b[at] != '\\' || s.b[at+1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(string(s.b[at+2:at+6]), 16, 16)
		return rune(v), err == nil
	}
	r, ok := hex4(s.i)
	if !ok {
		return 0, 0, s.fail("invalid \\u escape")
	}
	switch {
	case r >= 0xD800 && r < 0xDC00:
		if lo, ok := hex4(s.i + 6); ok && lo >= 0xDC00 && lo < 0xE000 {
			return 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00), 12, nil
		}
		info.loneSurrogate = true
		return utf8.RuneError, 6, nil
	case r >= 0xDC00 && r < 0xE000:
		info.loneSurrogate = true
		return utf8.RuneError, 6, nil
	}
	return r, 6, nil
}

// members returns the raw value of each member of a top-level JSON object, by name (the last
// one wins). b must have passed [scanJSON].
func members(b []byte) map[string][]byte {
	out := map[string][]byte{}
	var info scanInfo
	s := scanner{b: b}
	s.space()
	if s.i >= len(b) || b[s.i] != '{' {
		return nil
	}
	s.i++
	s.space()
	if s.i < len(b) && b[s.i] == '}' {
		return out
	}
	for s.i < len(b) {
		s.space()
		if s.i >= len(b) || b[s.i] != '"' {
			return out
		}
		name, err := s.str(&info, true)
		if err != nil {
			return out
		}
		s.space()
		if s.i >= len(b) || b[s.i] != ':' {
			return out
		}
		s.i++
		s.space()
		start := s.i
		if err := s.value(&info); err != nil {
			return out
		}
		out[name] = b[start:s.i]
		s.space()
		if s.i >= len(b) || b[s.i] != ',' {
			return out
		}
		s.i++
	}
	return out
}

// Span is a byte range [Start, End) of a JSON text: one object member, from the opening quote
// of its name to the end of its value.
type Span struct{ Start, End int }

// ScanSpans parses b as one JSON value and returns the member spans of every object nested at
// most maxDepth levels deep (the outermost value is level 0), outer objects first. ok is
// false when b is not JSON. Deeper values are skipped without recursion.
func ScanSpans(b []byte, maxDepth int) (objects [][]Span, ok bool) {
	s := scanner{b: b}
	var info scanInfo
	s.space()
	if !s.spans(&objects, &info, 0, maxDepth) {
		return nil, false
	}
	s.space()
	return objects, s.i == len(b)
}

// spans scans one value at s.i, recording object members down to maxDepth.
func (s *scanner) spans(out *[][]Span, info *scanInfo, depth, maxDepth int) bool {
	if s.i >= len(s.b) {
		return false
	}
	c := s.b[s.i]
	if depth > maxDepth || (c != '{' && c != '[') {
		return s.value(info) == nil
	}
	s.i++
	s.space()
	closer := byte(']')
	if c == '{' {
		closer = '}'
	}
	idx := -1
	if c == '{' {
		*out = append(*out, nil)
		idx = len(*out) - 1
	}
	if s.i < len(s.b) && s.b[s.i] == closer {
		s.i++
		return true
	}
	for {
		s.space()
		start := s.i
		if c == '{' {
			if s.i >= len(s.b) || s.b[s.i] != '"' {
				return false
			}
			if _, err := s.str(info, false); err != nil {
				return false
			}
			s.space()
			if s.i >= len(s.b) || s.b[s.i] != ':' {
				return false
			}
			s.i++
			s.space()
		}
		if !s.spans(out, info, depth+1, maxDepth) {
			return false
		}
		if c == '{' {
			(*out)[idx] = append((*out)[idx], Span{start, s.i})
		}
		s.space()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case closer:
			s.i++
			return true
		default:
			return false
		}
	}
}
