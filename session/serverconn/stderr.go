package serverconn

import (
	"errors"
	"io"
	"os"
	"unicode/utf8"

	"github.com/mcpspec/mcpspec/internal/regfile"
)

// ReadTail returns what the file at path holds after offset, at most its last n bytes; a cut
// start drops the partial first line and is marked with "…". It returns "" when the file is
// missing or holds nothing past offset. A file now shorter than offset was cut back (see
// stdio.Command.StderrPath): its last n bytes are returned.
func ReadTail(path string, offset, n int64) string {
	if path == "" {
		return ""
	}
	f, err := regfile.Open(path) // never blocks on a named pipe
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() == offset {
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

// FileSize returns the size of the file at path, or 0 (where a later [ReadTail] starts).
func FileSize(path string) int64 {
	if path == "" {
		return 0
	}
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}
