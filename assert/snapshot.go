package assert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"

	"github.com/mcpspec/mcpspec/internal/regfile"
	"github.com/mcpspec/mcpspec/result"
)

// snapshotName is what a snapshot file may be called (no separators, no dot-files).
var snapshotName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

type snapshotChecker struct {
	path *Path
	file string
}

func compileSnapshot(spec *Spec, opts *CompileOptions) (Checker, error) {
	p, err := optPath(spec)
	if err != nil {
		return nil, err
	}
	if !snapshotName.MatchString(spec.Name) {
		return nil, fieldErr("name", "snapshot name %q must be letters, digits, '_', '-', '.' (no path)", spec.Name)
	}
	if opts.SnapshotDir == "" {
		return nil, fieldErr("", "snapshot assertions need a snapshot directory")
	}
	return &snapshotChecker{path: p, file: filepath.Join(opts.SnapshotDir, spec.Name+".json")}, nil
}

// File returns the golden file the checker compares with.
func (c *snapshotChecker) File() string { return c.file }

func (c *snapshotChecker) Check(ctx context.Context, s *Subject) *result.Failure {
	got, f := at(ctx, "snapshot", c.path, s)
	if f != nil {
		return f
	}
	data, err := indentJSON(got)
	if err != nil {
		return failure("snapshot", label(c.path, "$"), "", "", "encode snapshot: %v", err)
	}
	if s.UpdateSnapshots {
		if err := os.MkdirAll(filepath.Dir(c.file), 0o755); err != nil {
			return failure("snapshot", label(c.path, "$"), "", "", "update snapshot: %v", err)
		}
		if err := os.WriteFile(c.file, data, 0o644); err != nil {
			return failure("snapshot", label(c.path, "$"), "", "", "update snapshot: %v", err)
		}
		return nil
	}
	want, err := regfile.ReadFile(c.file) // a named pipe would block a plain read forever
	if errors.Is(err, fs.ErrNotExist) {
		return failure("snapshot", label(c.path, "$"), c.file, Excerpt(got, maxActual),
			"snapshot %s does not exist; run with --update to create it", c.file)
	}
	if err != nil {
		return failure("snapshot", label(c.path, "$"), "", "", "read snapshot: %v", err)
	}
	wantDoc, err := DecodeJSON(want)
	if err != nil {
		return failure("snapshot", label(c.path, "$"), "", "", "snapshot %s is not JSON: %v", c.file, err)
	}
	if Equal(wantDoc, got) {
		return nil
	}
	w, g := Excerpt(wantDoc, maxActual), Excerpt(got, maxActual)
	return failure("snapshot", label(c.path, "$"), w, g, "%s differs from snapshot %s:%s; run with --update to accept",
		label(c.path, "$"), c.file, firstDiff(bytes.TrimSpace(want), bytes.TrimSpace(data)))
}

// firstDiff describes the first differing line of two indented JSON documents.
// diffLine quotes one snapshot line for a message: in backquotes, so the JSON punctuation it
// ends with ("v1",) is not read as the message's own; a line past the end says so.
func diffLine(l []byte, present bool) string {
	if !present {
		return "end of file"
	}
	return "`" + truncate(string(bytes.TrimSpace(l)), 120) + "`"
}

func firstDiff(want, got []byte) string {
	wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g []byte
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if !bytes.Equal(w, g) {
			return fmt.Sprintf(" line %d: want %s, got %s", i+1, diffLine(w, i < len(wl)), diffLine(g, i < len(gl)))
		}
	}
	return ""
}
