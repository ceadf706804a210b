package recording

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/mcpspec/mcpspec/internal/regfile"
)

// DefaultMaxSize is the largest recording [ReadFile] reads (256 MiB).
const DefaultMaxSize = 256 << 20

// maxLine is the longest line Read accepts: a whole frame of the largest size a transport
// accepts, escaped, and the entry around it.
const maxLine = 2*DefaultMaxFrame + 64<<10

// LineError is a line of a recording that cannot be read.
type LineError struct {
	// File is the recording's name as given to Read.
	File string
	// Line is the 1-based line number.
	Line int
	// Reason says what is wrong.
	Reason string
}

// Error renders "FILE:LINE: reason".
func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason) }

// ErrNotRecording is wrapped by the [LineError] of a first line that is no recording header.
var ErrNotRecording = errors.New("not an mcpspec recording")

// ReadFile reads the recording at path; a file larger than maxSize bytes (0 =
// [DefaultMaxSize]), or one that is not a regular file, is refused before it is read.
func ReadFile(path string, maxSize int64) (*Recording, error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxSize
	}
	f, err := regfile.OpenLimit(path, maxSize)
	if err != nil {
		return nil, fmt.Errorf("read recording: %w", err)
	}
	defer f.Close()
	return Read(io.LimitReader(f, maxSize), path)
}

// Read reads a recording from r; name is used in errors, which are *[LineError] for a bad
// line. Blank lines are skipped.
func Read(r io.Reader, name string) (*Recording, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	rec := &Recording{}
	n, seenHeader := 0, false
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if !seenHeader {
			if err := readHeader(line, &rec.Header); err != nil {
				return nil, &LineError{File: name, Line: n, Reason: err.Error()}
			}
			seenHeader = true
			continue
		}
		e, err := readEntry(line)
		if err != nil {
			return nil, &LineError{File: name, Line: n, Reason: err.Error()}
		}
		rec.Entries = append(rec.Entries, e)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &LineError{File: name, Line: n + 1, Reason: fmt.Sprintf("line longer than %d bytes", maxLine)}
		}
		return nil, fmt.Errorf("read recording %s: %w", name, err)
	}
	if !seenHeader {
		return nil, &LineError{File: name, Line: 1, Reason: fmt.Sprintf("empty file: %v", ErrNotRecording)}
	}
	return rec, nil
}

func readHeader(line []byte, h *Header) error {
	var probe map[string]json.RawMessage
	if json.Unmarshal(line, &probe) != nil || probe["mcpspecRecording"] == nil {
		return fmt.Errorf("%w: the first line must be its header {\"mcpspecRecording\":%d,…}", ErrNotRecording, Version)
	}
	if err := json.Unmarshal(line, h); err != nil {
		return fmt.Errorf("bad header: %v", err)
	}
	if h.Format < 1 || h.Format > Version {
		return fmt.Errorf("recording format %d is not one this mcpspec reads (1 to %d): upgrade mcpspec", h.Format, Version)
	}
	return nil
}

func readEntry(line []byte) (Entry, error) {
	var e Entry
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(&e); err != nil {
		return e, fmt.Errorf("bad frame line: %v", err)
	}
	if d.More() {
		return e, errors.New("bad frame line: more than one JSON value")
	}
	switch {
	case e.Dir != ClientToServer && e.Dir != ServerToClient:
		return e, fmt.Errorf("bad frame line: dir %q is neither %q nor %q", e.Dir, ClientToServer, ServerToClient)
	case len(e.Frame) == 0 && e.Text == "":
		return e, errors.New("bad frame line: no frame and no text")
	case len(e.Frame) > 0 && e.Text != "":
		return e, errors.New("bad frame line: both frame and text")
	case e.Offset < 0:
		return e, fmt.Errorf("bad frame line: offset %v is negative", e.Offset)
	}
	return e, nil
}
