package audit

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// hiddenHit is one run of hidden or control characters in a string.
type hiddenHit struct {
	rule       string
	start, end int
	// what describes the characters ("U+200B ZERO WIDTH SPACE ×2").
	what string
	// decoded is the hidden text, for tag characters and variation-selector bytes.
	decoded string
}

// isTag reports whether r is a Unicode tag character (U+E0000–E007F).
func isTag(r rune) bool { return r >= 0xE0000 && r <= 0xE007F }

// isVariationSelector reports whether r is VS1–VS16 or VS17–VS256.
func isVariationSelector(r rune) bool {
	return (r >= 0xFE00 && r <= 0xFE0F) || (r >= 0xE0100 && r <= 0xE01EF)
}

// vsByte is the byte a variation selector encodes in the smuggling scheme (VS1–16 → 0–15,
// VS17–256 → 16–255).
func vsByte(r rune) byte {
	if r <= 0xFE0F {
		return byte(r - 0xFE00)
	}
	return byte(r - 0xE0100 + 16)
}

// isBidiControl reports embedding, override and isolate controls.
func isBidiControl(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

// invisibleKind names r when it is an invisible formatting character, "" otherwise.
func invisibleKind(r rune) string {
	switch r {
	case 0x200B:
		return "ZERO WIDTH SPACE"
	case 0x200C:
		return "ZERO WIDTH NON-JOINER"
	case 0x200D:
		return "ZERO WIDTH JOINER"
	case 0x2060:
		return "WORD JOINER"
	case 0x2061:
		return "FUNCTION APPLICATION"
	case 0x2062:
		return "INVISIBLE TIMES"
	case 0x2063:
		return "INVISIBLE SEPARATOR"
	case 0x2064:
		return "INVISIBLE PLUS"
	case 0xFEFF:
		return "ZERO WIDTH NO-BREAK SPACE"
	case 0x180E:
		return "MONGOLIAN VOWEL SEPARATOR"
	case 0x00AD:
		return "SOFT HYPHEN"
	case 0x034F:
		return "COMBINING GRAPHEME JOINER"
	case 0x115F, 0x1160, 0x3164, 0xFFA0:
		return "HANGUL FILLER"
	case 0x17B4, 0x17B5:
		return "KHMER INHERENT VOWEL"
	}
	if r >= 0x1D173 && r <= 0x1D17A {
		return "MUSICAL FORMATTING"
	}
	if isBidiControl(r) {
		return "BIDI CONTROL"
	}
	if isVariationSelector(r) {
		return "VARIATION SELECTOR"
	}
	return ""
}

// isEmojiBase approximates Extended_Pictographic plus keycap bases: the characters a VS16, a
// skin-tone modifier or a ZWJ may follow in an emoji sequence.
func isEmojiBase(r rune) bool {
	switch {
	case r >= 0x1F000 && r <= 0x1FAFF, r >= 0x2600 && r <= 0x27BF, r >= 0x2300 && r <= 0x23FF,
		r >= 0x2190 && r <= 0x21FF, r >= 0x25A0 && r <= 0x25FF, r >= 0x2900 && r <= 0x297F,
		r >= 0x2B00 && r <= 0x2BFF, r >= 0x2460 && r <= 0x24FF, r >= 0x3030 && r <= 0x303D,
		r == 0x3297, r == 0x3299, r == 0xA9, r == 0xAE, r == 0x203C, r == 0x2049, r == 0x2122,
		r == 0x2139, r == 0x2642, r == 0x2640, r == 0x2695, r == 0x2708:
		return true
	case r == '#' || r == '*' || (r >= '0' && r <= '9'):
		return true
	}
	return false
}

// isIdeograph reports characters that take standardized or ideographic variation selectors.
func isIdeograph(r rune) bool {
	return unicode.Is(unicode.Han, r) || (r >= 0x2200 && r <= 0x22FF) || (r >= 0x2A00 && r <= 0x2AFF) ||
		unicode.Is(unicode.Mongolian, r) || unicode.Is(unicode.Phags_Pa, r) || unicode.Is(unicode.Myanmar, r)
}

// joinsScript reports letters of scripts that use ZWJ/ZWNJ in ordinary text (Arabic, Persian,
// Indic, Sinhala …): anything past Hebrew that is a letter or a mark.
func joinsScript(r rune) bool {
	return r >= 0x0600 && (unicode.IsLetter(r) || unicode.IsMark(r)) && !isEmojiBase(r)
}

// scanHidden finds hidden, control and escape characters in s. Allowed: emoji ZWJ sequences,
// VS15/VS16 after an emoji, one standardized variation selector after an ideograph, ZWJ/ZWNJ
// between letters of joining scripts, subdivision-flag tag sequences.
func scanHidden(s string) []hiddenHit {
	var hits []hiddenHit
	runes := []rune{}
	offs := []int{}
	for i, r := range s {
		runes = append(runes, r)
		offs = append(offs, i)
	}
	offs = append(offs, len(s))
	prevBase := func(i int) rune {
		// The character a selector or joiner attaches to, skipping skin-tone modifiers.
		for j := i - 1; j >= 0; j-- {
			if runes[j] >= 0x1F3FB && runes[j] <= 0x1F3FF {
				continue
			}
			return runes[j]
		}
		return 0
	}
	for i := 0; i < len(runes); {
		r := runes[i]
		switch {
		case r == 0x1B || r == 0x9B:
			end := ansiEnd(s, offs[i])
			hits = append(hits, hiddenHit{rule: RuleANSI, start: offs[i], end: end, what: fmt.Sprintf("escape sequence %s", visible(s[offs[i]:end]))})
			for i < len(runes) && offs[i] < end {
				i++
			}
			continue
		case isTag(r):
			j := i
			var dec strings.Builder
			for j < len(runes) && isTag(runes[j]) {
				if runes[j] >= 0xE0020 && runes[j] <= 0xE007E {
					dec.WriteByte(byte(runes[j] - 0xE0000))
				}
				j++
			}
			flag := i > 0 && runes[i-1] == 0x1F3F4 && runes[j-1] == 0xE007F && j-i <= 8
			if !flag {
				hits = append(hits, hiddenHit{rule: RuleHiddenTags, start: offs[i], end: offs[j], what: fmt.Sprintf("%d tag characters", j-i), decoded: dec.String()})
			}
			i = j
			continue
		case isVariationSelector(r):
			j := i
			for j < len(runes) && isVariationSelector(runes[j]) {
				j++
			}
			base := prevBase(i)
			n := j - i
			allowed := n == 1 && ((r == 0xFE0E || r == 0xFE0F) && isEmojiBase(base) ||
				r <= 0xFE0D && isIdeograph(base) || r >= 0xE0100 && unicode.Is(unicode.Han, base))
			if !allowed {
				var dec []byte
				for _, v := range runes[i:j] {
					dec = append(dec, vsByte(v))
				}
				d := ""
				if n > 1 {
					d = printable(dec)
				}
				hits = append(hits, hiddenHit{rule: RuleHiddenVariation, start: offs[i], end: offs[j], what: fmt.Sprintf("%d variation selectors", n), decoded: d})
			}
			i = j
			continue
		case isBidiControl(r):
			hits = append(hits, runOf(runes, offs, &i, RuleBidi, isBidiControl))
			continue
		case r == 0x200D || r == 0x200C:
			var next rune
			if i+1 < len(runes) {
				next = runes[i+1]
			}
			base := prevBase(i)
			if r == 0x200D && isEmojiBase(base) && isEmojiBase(next) || joinsScript(base) && joinsScript(next) {
				i++
				continue
			}
			hits = append(hits, runOf(runes, offs, &i, RuleInvisible, func(r rune) bool { return invisibleKind(r) != "" && !isVariationSelector(r) && !isBidiControl(r) }))
			continue
		case invisibleKind(r) != "":
			hits = append(hits, runOf(runes, offs, &i, RuleInvisible, func(r rune) bool { return invisibleKind(r) != "" && !isVariationSelector(r) && !isBidiControl(r) }))
			continue
		case (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7F || (r >= 0x80 && r <= 0x9F):
			hits = append(hits, runOf(runes, offs, &i, RuleControl, func(r rune) bool {
				return (r < 0x20 && r != '\t' && r != '\n' && r != '\r' && r != 0x1B) || r == 0x7F || (r >= 0x80 && r <= 0x9F && r != 0x9B)
			}))
			continue
		}
		i++
	}
	return hits
}

// runOf consumes the run of runes matching in starting at *i and describes it.
func runOf(runes []rune, offs []int, i *int, rule string, in func(rune) bool) hiddenHit {
	j := *i
	var names []string
	for j < len(runes) && (j == *i || in(runes[j])) {
		name := fmt.Sprintf("U+%04X", runes[j])
		if k := invisibleKind(runes[j]); k != "" {
			name += " " + k
		}
		if len(names) == 0 || names[len(names)-1] != name {
			names = append(names, name)
		}
		j++
	}
	h := hiddenHit{rule: rule, start: offs[*i], end: offs[j], what: strings.Join(names, ", ")}
	if j-*i > 1 {
		h.what = fmt.Sprintf("%d characters: %s", j-*i, h.what)
	}
	*i = j
	return h
}

// ansiEnd returns the end offset of the escape sequence starting at s[i] (ESC or 8-bit CSI).
func ansiEnd(s string, i int) int {
	if s[i:] == "" {
		return i
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	j := i + n
	if r == 0x9B {
		return csiEnd(s, j)
	}
	if j >= len(s) {
		return j
	}
	switch s[j] {
	case '[':
		return csiEnd(s, j+1)
	case ']', 'P', '_', '^', 'X':
		// OSC/DCS/APC/PM/SOS: up to BEL or ST (ESC \), bounded.
		for k := j + 1; k < len(s) && k < j+4096; k++ {
			if s[k] == 0x07 {
				return k + 1
			}
			if s[k] == 0x1B && k+1 < len(s) && s[k+1] == '\\' {
				return k + 2
			}
		}
		return min(len(s), j+4096)
	}
	// A two-character escape (ESC c, ESC 7 …), plus intermediates.
	k := j
	for k < len(s) && s[k] >= 0x20 && s[k] <= 0x2F {
		k++
	}
	if k < len(s) && s[k] >= 0x30 && s[k] <= 0x7E {
		k++
	}
	return k
}

// csiEnd returns the end of a CSI sequence whose parameters start at j.
func csiEnd(s string, j int) int {
	for k := j; k < len(s) && k < j+256; k++ {
		if s[k] >= 0x40 && s[k] <= 0x7E {
			return k + 1
		}
		if s[k] < 0x20 || s[k] > 0x7E {
			return k
		}
	}
	return min(len(s), j+256)
}

// printable renders decoded bytes as text when they are UTF-8, else as hex.
func printable(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return fmt.Sprintf("% x", b)
}
