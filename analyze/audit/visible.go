package audit

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// visible renders s so that nothing in it is invisible or acts on a terminal: control
// characters, escapes and invisible code points become \xNN or <U+XXXX>, and runs of tag
// characters become ⟦tags:"decoded"⟧.
func visible(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case isTag(r):
			j := i
			var dec strings.Builder
			for j < len(s) {
				r2, n2 := utf8.DecodeRuneInString(s[j:])
				if !isTag(r2) {
					break
				}
				dec.WriteByte(byte(r2 - 0xE0000))
				j += n2
			}
			fmt.Fprintf(&b, "⟦tags:%q⟧", dec.String())
			i = j
			continue
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f:
			fmt.Fprintf(&b, `\u%04x`, r)
		case invisibleKind(r) != "":
			fmt.Fprintf(&b, "<U+%04X>", r)
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}

// excerptContext is how many bytes of context an excerpt keeps on each side of its span.
const excerptContext = 80

// excerpt renders the text around s[start:end] visibly, marking the span with »…«, with an
// ellipsis where it was cut. Offsets outside s are clamped.
func excerpt(s string, start, end int) string {
	start, end = clamp(start, 0, len(s)), clamp(end, 0, len(s))
	if end < start {
		start, end = end, start
	}
	from, to := snap(s, start-excerptContext), snap(s, end+excerptContext)
	var b strings.Builder
	if from > 0 {
		b.WriteString("…")
	}
	b.WriteString(visible(s[from:start]))
	b.WriteString("»")
	span := s[start:end]
	if len(span) > 240 {
		span = s[start:snap(s, start+240)]
		b.WriteString(visible(span) + "…")
	} else {
		b.WriteString(visible(span))
	}
	b.WriteString("«")
	b.WriteString(visible(s[end:to]))
	if to < len(s) {
		b.WriteString("…")
	}
	return b.String()
}

// evidence builds the Evidence of a span of the string at pointer.
func evidence(pointer, s string, start, end int, decoded string) *Evidence {
	return &Evidence{Pointer: pointer, Excerpt: excerpt(s, start, end), Start: clamp(start, 0, len(s)), End: clamp(end, 0, len(s)), Decoded: decoded}
}

func clamp(v, lo, hi int) int {
	return max(lo, min(v, hi))
}

// snap moves i (clamped to s) back to the start of the rune it falls in.
func snap(s string, i int) int {
	i = clamp(i, 0, len(s))
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// clip shortens s to at most n bytes on a rune boundary, adding "…" when cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:snap(s, n)] + "…"
}
