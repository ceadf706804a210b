package runner

import (
	"encoding/json"
	"unicode/utf8"
)

// Excerpt limits of the result model (reporters cut further for display).
const (
	// MaxExcerpt bounds the request and response excerpts kept in a result, in bytes.
	MaxExcerpt = 8 << 10
	// MaxStderrExcerpt bounds the server stderr quoted for a failed test, in bytes.
	MaxStderrExcerpt = 4 << 10
)

// excerptValue renders v as compact JSON with its strings masked, cut to MaxExcerpt bytes.
// Masking the decoded value (not the encoded text) also masks a secret that holds characters
// JSON escapes.
func excerptValue(v any, mask func(string) string) string {
	b, err := json.Marshal(maskValue(v, mask))
	if err != nil {
		return ""
	}
	return cut(mask(string(b)), MaxExcerpt)
}

// excerptRaw renders a raw JSON document like excerptValue; undecodable bytes are masked as text.
func excerptRaw(raw []byte, mask func(string) string) string {
	if len(raw) == 0 {
		return ""
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return cut(mask(string(raw)), MaxExcerpt)
	}
	return excerptValue(v, mask)
}

// cut shortens s to at most n bytes on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
