package envfile

import (
	"bytes"
	"fmt"
	"strings"
)

// SyntaxError is a line Parse could not read.
type SyntaxError struct {
	// Line is the 1-based line the problem is on (for an unclosed quote, where it opened).
	Line int
	// Msg says what is wrong, without quoting the value.
	Msg string
	// Hint is the next step.
	Hint string
}

// Error returns "line N: message".
func (e *SyntaxError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Parse reads the variables of a dotenv file.
func Parse(data []byte) (map[string]string, error) {
	p := parser{src: data, line: 1}
	p.src = bytes.TrimPrefix(p.src, []byte("\ufeff")) // a BOM some editors write
	out := map[string]string{}
	for p.more() {
		k, v, err := p.entry()
		if err != nil {
			return nil, err
		}
		if k != "" {
			out[k] = v
		}
	}
	return out, nil
}

type parser struct {
	src  []byte
	pos  int
	line int
}

func (p *parser) more() bool { return p.pos < len(p.src) }

// peek returns the current byte, or 0 at the end.
func (p *parser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

// blanks skips spaces and tabs (not line ends).
func (p *parser) blanks() {
	for p.more() && isBlank(p.src[p.pos]) {
		p.pos++
	}
}

// endLine consumes an optional comment and the line end. It fails on anything else.
func (p *parser) endLine(after string) error {
	p.blanks()
	if p.peek() == '#' {
		p.skipLine()
		return nil
	}
	if p.eol() {
		return nil
	}
	return p.errorf("unexpected text after %s", "quote a value that holds spaces and #, or start a comment with ' #'", after)
}

// eol consumes a line end (\n, \r\n or the end of the data) and reports whether there was one.
func (p *parser) eol() bool {
	switch {
	case !p.more():
		return true
	case p.src[p.pos] == '\n':
		p.pos++
		p.line++
		return true
	case p.src[p.pos] == '\r' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '\n':
		p.pos += 2
		p.line++
		return true
	case p.src[p.pos] == '\r' && p.pos+1 == len(p.src):
		p.pos++
		return true
	}
	return false
}

// skipLine consumes the rest of the line and its end.
func (p *parser) skipLine() {
	i := bytes.IndexByte(p.src[p.pos:], '\n')
	if i < 0 {
		p.pos = len(p.src)
		return
	}
	p.pos += i + 1
	p.line++
}

func (p *parser) errorf(format, hint string, args ...any) *SyntaxError {
	return &SyntaxError{Line: p.line, Msg: fmt.Sprintf(format, args...), Hint: hint}
}

// entry reads one line (or a quoted value's lines); k is "" for a blank or comment line.
func (p *parser) entry() (k, v string, err error) {
	p.blanks()
	if p.peek() == '#' {
		p.skipLine()
		return "", "", nil
	}
	if p.eol() {
		return "", "", nil
	}
	if rest := p.src[p.pos:]; bytes.HasPrefix(rest, []byte("export")) && len(rest) > 6 && isBlank(rest[6]) {
		p.pos += 6
		p.blanks()
	}
	start := p.pos
	for p.more() && isKeyByte(p.src[p.pos]) {
		p.pos++
	}
	k = string(p.src[start:p.pos])
	p.blanks()
	if p.peek() != '=' {
		if k == "" {
			return "", "", p.errorf("a variable name must start the line", "names are letters, digits, _ . and -; write KEY=VALUE")
		}
		// The name is not quoted: a line without = may be a pasted secret.
		if p.more() && !isLineEnd(p.peek()) {
			return "", "", p.errorf("the name holds a character a name cannot hold, or is not followed by =", "names are letters, digits, _ . and -; write KEY=VALUE")
		}
		return "", "", p.errorf("not a KEY=VALUE line (no =)", "write KEY=VALUE (KEY= for an empty value)")
	}
	if k == "" {
		return "", "", p.errorf("a line starts with = but no name", "write KEY=VALUE")
	}
	p.pos++ // =
	p.blanks()
	switch p.peek() {
	case '\'':
		v, err = p.single()
	case '"':
		v, err = p.double()
	default:
		v = p.unquoted()
		return k, v, nil
	}
	if err != nil {
		return "", "", err
	}
	return k, v, p.endLine("the closing quote of " + k)
}

// unquoted reads a value to the line end, without an inline comment, trimmed.
func (p *parser) unquoted() string {
	start := p.pos
	end := len(p.src)
	for i := p.pos; i < len(p.src); i++ {
		c := p.src[i]
		if c == '\n' {
			end = i
			break
		}
		// A # starts a comment when it follows a blank (`A= # note` is empty, `A=#fff` is not).
		if c == '#' && isBlank(p.src[i-1]) {
			end = i
			break
		}
	}
	v := strings.TrimRight(string(p.src[start:end]), " \t\r")
	p.pos = end
	p.skipLine()
	return v
}

// single reads a 'literal' value; the opening quote is at p.pos.
func (p *parser) single() (string, error) {
	open := p.line
	p.pos++
	i := bytes.IndexByte(p.src[p.pos:], '\'')
	if i < 0 {
		return "", &SyntaxError{Line: open, Msg: "the ' opened here is never closed",
			Hint: "close the quote; inside single quotes nothing is escaped, so write a ' as '\"'\"' or use double quotes"}
	}
	v := p.src[p.pos : p.pos+i]
	p.line += bytes.Count(v, []byte("\n"))
	p.pos += i + 1
	return strings.ReplaceAll(string(v), "\r\n", "\n"), nil
}

// double reads a "double-quoted" value with escapes; the opening quote is at p.pos.
func (p *parser) double() (string, error) {
	open := p.line
	p.pos++
	var b strings.Builder
	for p.more() {
		c := p.src[p.pos]
		switch {
		case c == '"':
			p.pos++
			return b.String(), nil
		case c == '\\' && p.pos+1 < len(p.src):
			p.pos += 2
			switch e := p.src[p.pos-1]; e {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case '"', '\\', '$':
				b.WriteByte(e)
			default:
				p.pos-- // not an escape: keep the backslash, read the byte as usual
				b.WriteByte('\\')
			}
		case c == '\r' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '\n':
			p.pos++ // \r\n inside quotes is \n
		default:
			if c == '\n' {
				p.line++
			}
			b.WriteByte(c)
			p.pos++
		}
	}
	return "", &SyntaxError{Line: open, Msg: `the " opened here is never closed`,
		Hint: `close the quote; write a " inside double quotes as \"`}
}

// isKeyByte reports whether c may be part of a name: letters, digits, _ . and -.
func isKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

func isLineEnd(c byte) bool { return c == '\n' || c == '\r' }
