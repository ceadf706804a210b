package jsonscan

import (
	"fmt"
	"unicode/utf8"
)

// This file is the strict side of the package: an iterative walk (any depth is safe) that
// checks one whole JSON text, UTF-8 included, says where it breaks and what it holds that
// RFC 8259 only discourages (repeated member names, unpaired surrogates), and finds the
// members of objects without decoding the rest. The fuzzer's frame judge and shrinker read
// frames with it.

// Info is what [Check] learns about one JSON text.
type Info struct {
	// Depth is the deepest nesting of arrays and objects (a top-level object is depth 1).
	Depth int
	// DupKey is set when an object repeats a member name (RFC 8259 §4: names SHOULD be unique).
	DupKey bool
	// LoneSurrogate is set when a string escapes a UTF-16 surrogate that has no partner
	// (RFC 8259 §8.2: such strings may be handled unpredictably).
	LoneSurrogate bool
}

// Check reports whether b is exactly one JSON value (RFC 8259) in valid UTF-8 with only
// whitespace around it, and what [Info] it holds. An error wraps [ErrSyntax] and says at which
// byte and why. It never recurses, so any depth is safe, and never panics.
func Check(b []byte) (Info, error) {
	var info Info
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

// scanner walks b from i.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) fail(format string, args ...any) error {
	return fmt.Errorf("%w: at byte %d: %s", ErrSyntax, s.i, fmt.Sprintf(format, args...))
}

func (s *scanner) space() { s.i = SkipSpace(s.b, s.i) }

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
func (s *scanner) value(info *Info) error {
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
			info.Depth = max(info.Depth, len(stack))
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
		case c == 't' || c == 'f' || c == 'n':
			lit := "null"
			if c == 't' {
				lit = "true"
			} else if c == 'f' {
				lit = "false"
			}
			end, err := skipLiteral(s.b, s.i, lit)
			if err != nil {
				return s.fail("invalid literal")
			}
			s.i = end
		case c == '-' || IsDigit(c):
			end, why := numberEnd(s.b, s.i)
			if why != "" {
				s.i = end
				return s.fail("%s", why)
			}
			s.i = end
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
func (s *scanner) key(f *frame, info *Info) error {
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return s.fail("expected a member name")
	}
	name, err := s.str(info, true)
	if err != nil {
		return err
	}
	if f.seen(name) {
		info.DupKey = true
	}
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		return s.fail("expected ':' after a member name")
	}
	s.i++
	return nil
}

// str scans a string token and, when decode is set, returns its decoded value (lone
// surrogates as U+FFFD).
func (s *scanner) str(info *Info, decode bool) (string, error) {
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
			if e, ok := simpleEscape(s.b[s.i+1]); ok {
				out = append(out, e)
				s.i += 2
				continue
			}
			if s.b[s.i+1] != 'u' {
				return "", s.fail("invalid escape \\%c", s.b[s.i+1])
			}
			r, n, lone, ok := unicodeEscape(s.b, s.i)
			if !ok {
				return "", s.fail("invalid \\u escape")
			}
			info.LoneSurrogate = info.LoneSurrogate || lone
			out = utf8.AppendRune(out, r)
			s.i += n
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

// DecodeString decodes a string token that spans all of tok, in valid UTF-8 (unpaired
// surrogates become U+FFFD); ok is false for anything else. Unlike [Unquote] it checks the
// token.
func DecodeString(tok []byte) (string, bool) {
	if len(tok) < 2 || tok[0] != '"' {
		return "", false
	}
	var info Info
	s := scanner{b: tok}
	v, err := s.str(&info, true)
	if err != nil || s.i != len(tok) {
		return "", false
	}
	return v, true
}

// Members returns the raw value of each member of a top-level JSON object, by decoded name
// (the last one wins); nil when b is not an object. b should have passed [Check]: on a
// syntax error it returns the members read so far.
func Members(b []byte) map[string][]byte {
	out := map[string][]byte{}
	var info Info
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
	var info Info
	s.space()
	if !s.spans(&objects, &info, 0, maxDepth) {
		return nil, false
	}
	s.space()
	return objects, s.i == len(b)
}

// spans scans one value at s.i, recording object members down to maxDepth.
func (s *scanner) spans(out *[][]Span, info *Info, depth, maxDepth int) bool {
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
