package redact

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Forms returns secret as written by each encoding mcpspec's outputs apply to a string, and by
// each pair of them (an escaped value inside a JSON report), without duplicates, longest first.
// The first encoding of the list is the identity, so secret itself is always a form. Forms
// shorter than [MinLen] bytes (whitespace folded away) are left out.
func Forms(secret string) []string {
	encs := encodings()
	seen := map[string]bool{}
	var out []string
	for _, e1 := range encs {
		once := e1(secret)
		for _, e2 := range encs {
			f := e2(once)
			if len(f) < MinLen || seen[f] {
				continue
			}
			seen[f] = true
			out = append(out, f)
		}
	}
	slices.SortFunc(out, longestFirst)
	return out
}

// lineBreaks are the characters at which a writer may break a value into lines (YAML also
// breaks at NEL, U+2028 and U+2029).
const lineBreaks = "\r\n\u0085\u2028\u2029"

// longestFirst orders strings by decreasing length, then bytewise.
func longestFirst(a, b string) int {
	if len(a) != len(b) {
		return len(b) - len(a)
	}
	return strings.Compare(a, b)
}

// encodings lists how an output may rewrite a string, the identity first.
func encodings() []func(string) string {
	return []func(string) string{
		func(s string) string { return s },
		func(s string) string { return jsonEscape(s, true) },
		func(s string) string { return jsonEscape(s, false) },
		jsonASCII,
		func(s string) string { q := strconv.Quote(s); return q[1 : len(q)-1] },
		func(s string) string { q := strconv.QuoteToASCII(s); return q[1 : len(q)-1] },
		xmlEscape,
		func(s string) string { return strings.ReplaceAll(xmlEscape(s), "&#xA;", "\n") },
		htmlEntities.Replace,
		htmlNamed.Replace,
		htmlTemplate.Replace,
		func(s string) string { return strings.ReplaceAll(s, "]]>", "]]]]><![CDATA[>") },
		url.QueryEscape,
		url.PathEscape,
		yamlDouble,
		yamlDoubleASCII,
		yamlV3,
		func(s string) string { return strings.ReplaceAll(s, "'", "''") },
		markdown.Replace,
		tapDescription.Replace,
		cleanControl,
		whitespace.Replace,
		func(s string) string { return strings.Join(strings.Fields(s), " ") },
	}
}

// jsonEscape is s inside a JSON string as encoding/json writes it; html selects its default
// escaping of <, > and & as \u003c, \u003e and \u0026.
func jsonEscape(s string, html bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(s); err != nil {
		return s
	}
	out := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	return string(out[1 : len(out)-1])
}

// jsonASCII is s inside a JSON string with every non-ASCII character as \uXXXX (surrogate
// pairs above U+FFFF), as JavaScript's and Python's ASCII-only encoders write it.
func jsonASCII(s string) string {
	var b strings.Builder
	for _, r := range jsonEscape(s, false) {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// xmlEscape is s as encoding/xml writes character data and attribute values (go-junit-report
// writes through it).
func xmlEscape(s string) string {
	var b strings.Builder
	if err := xml.EscapeText(&b, []byte(s)); err != nil {
		return s
	}
	return b.String()
}

var (
	// htmlEntities is html.EscapeString and html/template.HTMLEscapeString.
	htmlEntities = strings.NewReplacer("&", "&amp;", "'", "&#39;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "\x00", "\uFFFD")
	// htmlNamed is the named-entity style (&quot;), as the markdown reporter and many tools write.
	htmlNamed = strings.NewReplacer("&", "&amp;", "'", "&#x27;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
	// htmlTemplate is html/template's escaping of text and quoted attribute values, which also
	// escapes +.
	htmlTemplate = strings.NewReplacer("\x00", "\uFFFD", `"`, "&#34;", "&", "&amp;", "'", "&#39;", "+", "&#43;", "<", "&lt;", ">", "&gt;")
	// markdown escapes HTML-significant characters and markdown punctuation (the markdown
	// reporter's text cells).
	markdown = strings.NewReplacer("<", "&lt;", ">", "&gt;", "&", "&amp;", `"`, "&quot;",
		`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "|", `\|`, "#", `\#`, "~", `\~`)
	// tapDescription escapes a TAP test point's description.
	tapDescription = strings.NewReplacer(`\`, `\\`, "#", `\#`)
	// whitespace folds line breaks and tabs to spaces, as table cells and one-line summaries do.
	whitespace = strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ", "\t", " ")
)

// yamlDouble is s inside a YAML double-quoted scalar as the TAP reporter's YAMLish writes it.
func yamlDouble(s string) string { return yamlQuote(s, false) }

// yamlDoubleASCII is yamlDouble with every non-ASCII character as \uXXXX or \UXXXXXXXX, as
// YAML emitters that keep to ASCII write it.
func yamlDoubleASCII(s string) string { return yamlQuote(s, true) }

func yamlQuote(s string, ascii bool) string {
	var b strings.Builder
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
		case ascii && r > 0xFFFF:
			fmt.Fprintf(&b, `\U%08x`, r)
		case r == utf8.RuneError, r >= 0x80 && r < 0xa0, r == 0x2028, r == 0x2029, r == 0xfeff, ascii && r >= utf8.RuneSelf:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// yamlV3 is s inside a double-quoted scalar as gopkg.in/yaml.v3 writes it: line breaks, tabs,
// control characters and characters beyond U+FFFF escaped, with upper-case hex digits.
func yamlV3(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case 0:
			b.WriteString(`\0`)
		case 0x7:
			b.WriteString(`\a`)
		case 0x8:
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case 0xb:
			b.WriteString(`\v`)
		case 0xc:
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		case 0x1b:
			b.WriteString(`\e`)
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case 0x85:
			b.WriteString(`\N`)
		case 0xa0:
			b.WriteString(`\_`)
		case 0x2028:
			b.WriteString(`\L`)
		case 0x2029:
			b.WriteString(`\P`)
		default:
			switch {
			case r < 0x20 || r >= 0x7f && r < 0xa0:
				fmt.Fprintf(&b, `\x%02X`, r)
			case r == 0xfeff || r == 0xfffe || r == 0xffff || r >= 0xd800 && r < 0xe000:
				fmt.Fprintf(&b, `\u%04X`, r)
			case r > 0xffff:
				fmt.Fprintf(&b, `\U%08X`, r)
			default:
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}

// cleanControl replaces invalid UTF-8 and control characters other than newline and tab with
// U+FFFD, as the text reporters (and JUnit's XML-safe filter) print untrusted text.
func cleanControl(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) {
			return '\uFFFD'
		}
		return r
	}, s)
}
