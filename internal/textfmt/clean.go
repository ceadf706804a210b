package textfmt

import (
	"strings"
	"unicode/utf8"
)

// Clean makes text a server chose safe to print on a terminal: invalid UTF-8 and control
// characters other than newline and tab (C0 with CR and BEL, DEL, C1 — ESC among them, so OSC 52
// cannot write the clipboard, OSC 0 the title, nor a CR overwrite a line already printed)
// become U+FFFD. Every human-readable output of server text goes through it: the test console,
// errors and hints, tool tables, call results, the audit and the probe.
func Clean(s string) string {
	bad := !utf8.ValidString(s)
	if !bad {
		for _, r := range s {
			if isControl(r) {
				bad = true
				break
			}
		}
	}
	if !bad {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return '\uFFFD'
		}
		return r
	}, s)
}

func isControl(r rune) bool {
	return (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f)
}

// MarkdownText escapes text for GitHub markdown, table cells included: it is [Clean]ed, each
// run of white space (newlines too) becomes one space, HTML-significant characters become
// entities and markdown punctuation is backslash-escaped, so a server's text can open no link,
// image, HTML tag, code span or table cell.
func MarkdownText(s string) string {
	if strings.ContainsAny(s, "\r\n\t") {
		s = strings.Join(strings.Fields(s), " ")
	}
	s = Clean(s)
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '"':
			b.WriteString("&quot;")
		case '\\', '`', '*', '_', '[', ']', '|', '#', '~':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
