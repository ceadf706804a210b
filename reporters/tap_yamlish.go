package reporters

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// The TAP diagnostics block is written in YAMLish, the YAML subset TAP consumers read
// (TAP::Parser behind prove, tap-parser in node). A general YAML emitter picks forms that
// subset lacks: block headers with chomping or indentation indicators ("|-", "|2"), and
// \U escapes for every character outside the Basic Multilingual Plane (an emoji in a
// response came out as \U0001F389). So the block is written here, field by field; yaml.v3
// only decides whether a one-line string may stay plain.

// write renders d as YAMLish lines (without the block's own indentation or markers).
func (d *tapDiag) write(b *bytes.Buffer) {
	yamlishField(b, 0, "message", d.Message)
	yamlishField(b, 0, "severity", d.Severity)
	yamlishField(b, 0, "collection", d.Collection)
	yamlishField(b, 0, "file", d.File)
	yamlishField(b, 0, "target", d.Target)
	yamlishField(b, 0, "category", d.Category)
	if d.Code != 0 {
		fmt.Fprintf(b, "code: %d\n", d.Code)
	}
	yamlishField(b, 0, "hint", d.Hint)
	if len(d.Failures) > 0 {
		b.WriteString("failures:\n")
		for _, f := range d.Failures {
			fmt.Fprintf(b, "  - assertion: %s\n", yamlishScalar(f.Assertion, 4))
			yamlishField(b, 4, "path", f.Path)
			if f.Line != 0 {
				fmt.Fprintf(b, "    line: %d\n", f.Line)
			}
			yamlishField(b, 4, "expected", f.Expected)
			yamlishField(b, 4, "actual", f.Actual)
			yamlishField(b, 4, "message", f.Message)
		}
	}
	yamlishField(b, 0, "duration", d.Duration)
	if len(d.Attempts) > 0 {
		b.WriteString("attempts:\n")
		for _, a := range d.Attempts {
			fmt.Fprintf(b, "  - %s\n", yamlishScalar(a, 4))
		}
	}
	yamlishField(b, 0, "response", d.Response)
	yamlishField(b, 0, "stderr", d.Stderr)
	if len(d.Extracted) > 0 {
		b.WriteString("extracted:\n")
		keys := make([]string, 0, len(d.Extracted))
		for k := range d.Extracted {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(b, "  %s: %s\n", yamlishScalar(k, 4), yamlishScalar(d.Extracted[k], 4))
		}
	}
	if len(d.Findings) > 0 {
		b.WriteString("findings:\n")
		for _, f := range d.Findings {
			fmt.Fprintf(b, "  - category: %s\n", yamlishScalar(f.Category, 4))
			yamlishField(b, 4, "server", f.Server)
			yamlishField(b, 4, "message", f.Message)
			yamlishField(b, 4, "frame", f.Frame)
		}
	}
}

// yamlishField writes "key: value" at indent, omitting an empty value.
func yamlishField(b *bytes.Buffer, indent int, key, v string) {
	if v == "" {
		return
	}
	fmt.Fprintf(b, "%s%s: %s\n", strings.Repeat(" ", indent), key, yamlishScalar(v, indent+2))
}

// yamlishScalar renders s as a YAMLish scalar; a literal block's lines are indented by indent.
// A multi-line string is a "|" block when its lines allow one (see [literalSafe]; the header
// implies one trailing newline), otherwise double-quoted. A one-line string is what yaml.v3
// writes when that is plain or single-quoted, otherwise double-quoted by [yamlishQuote].
func yamlishScalar(s string, indent int) string {
	if strings.Contains(s, "\n") {
		v := strings.TrimRight(s, "\n")
		if literalSafe(v) {
			pad := strings.Repeat(" ", indent)
			return "|\n" + pad + strings.ReplaceAll(v, "\n", "\n"+pad)
		}
		return yamlishQuote(s)
	}
	if out, err := yaml.Marshal(s); err == nil {
		one := strings.TrimSuffix(string(out), "\n")
		if !strings.Contains(one, "\n") && !strings.HasPrefix(one, `"`) && !strings.HasPrefix(one, "|") && !strings.HasPrefix(one, ">") {
			return one
		}
	}
	return yamlishQuote(s)
}

// yamlishQuote double-quotes s with the escapes both YAML and YAMLish read: \\ \" \n \t \r
// and \xNN for other ASCII control characters. Other characters stay as UTF-8, except the
// few YAML treats as line breaks or byte-order marks, written as \uNNNN (YAMLish keeps that
// text as is, which is still one readable line).
func yamlishQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '"':
			b.WriteString(`\"`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == utf8.RuneError, r >= 0x80 && r < 0xa0, r == 0x2028, r == 0x2029, r == 0xfeff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// literalSafe reports whether v can be a plain "|" block: its first line does not start with
// a blank (that needs an indentation indicator), no line is empty, ends in a blank or reads as
// a document marker, and it holds only printable characters.
func literalSafe(v string) bool {
	if v == "" || v[0] == ' ' || v[0] == '\t' {
		return false
	}
	for _, l := range strings.Split(v, "\n") {
		if l == "" || strings.HasSuffix(l, " ") || strings.HasSuffix(l, "\t") || l == "..." || l == "---" {
			return false
		}
		for _, r := range l {
			if r == utf8.RuneError || r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 || r == 0xfeff {
				return false
			}
		}
	}
	return true
}
