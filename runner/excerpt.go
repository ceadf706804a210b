package runner

import (
	"encoding/json"
	"errors"
	"io"
	"os"
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

// fileSize returns the size of the file at path, or 0.
func fileSize(path string) int64 {
	if path == "" {
		return 0
	}
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// readTail returns at most the last n bytes written to path after offset, or "". A file now
// shorter than offset was cut back: its last n bytes are returned.
func readTail(path string, offset int64, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == offset {
		return ""
	}
	if st.Size() < offset {
		// The file was cut back (a stdio server's stderr file keeps its start and its last
		// MiB): what was written since offset is at its end.
		offset = 0
	}
	from := max(offset, st.Size()-n)
	b := make([]byte, st.Size()-from)
	k, err := f.ReadAt(b, from)
	if err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	s := string(b[:k])
	if from > offset {
		// Drop a partial first line (and a partial rune).
		for i := 0; i < len(s) && i < 512; i++ {
			if s[i] == '\n' {
				return "…" + s[i:]
			}
		}
		for len(s) > 0 && !utf8.RuneStart(s[0]) {
			s = s[1:]
		}
		return "…" + s
	}
	return s
}
