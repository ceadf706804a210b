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
	"strings"
	"sync"

	"github.com/mcpspec/mcpspec/internal/regfile"
	"github.com/mcpspec/mcpspec/result"
	"github.com/rogpeppe/go-internal/diff"
)

// snapshotName is what a snapshot file may be called (no separators, no dot-files).
var snapshotName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`) })

// snapshotTemplate matches a variable reference in a snapshot name, so the name's literal parts
// can be checked when the collection loads.
var snapshotTemplate = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{\{[^{}]*\}\}`) })

type snapshotChecker struct {
	path *Path
	// dir and name give the golden file, dir/name.json; a name with variables ("user-{{id}}",
	// one file per --data row) is expanded when the assertion runs.
	dir, name string
	file      string
}

func compileSnapshot(spec *Spec, opts *CompileOptions) (Checker, error) {
	p, err := optPath(spec)
	if err != nil {
		return nil, err
	}
	if !snapshotName().MatchString(snapshotTemplate().ReplaceAllString(spec.Name, "x")) {
		return nil, fieldErr("name", "snapshot name %q must be letters, digits, '_', '-', '.' (no path), and {{variables}}", spec.Name)
	}
	if opts.SnapshotDir == "" {
		return nil, fieldErr("", "snapshot assertions need a snapshot directory")
	}
	c := &snapshotChecker{path: p, dir: opts.SnapshotDir, name: spec.Name}
	if !strings.Contains(spec.Name, "{{") {
		c.file = filepath.Join(opts.SnapshotDir, spec.Name+".json")
	}
	return c, nil
}

// File returns the golden file the checker compares with ("" when its name has variables:
// the file is known only when the assertion runs).
func (c *snapshotChecker) File() string { return c.file }

// fileFor is the golden file for subject s: the name's variables expanded, the result checked
// to be a plain file name still.
func (c *snapshotChecker) fileFor(s *Subject) (string, *result.Failure) {
	if c.file != "" {
		return c.file, nil
	}
	v, err := s.expand(c.name)
	if err != nil {
		return "", failure("snapshot", label(c.path, "$"), "", "", "snapshot name %q: %v", c.name, err)
	}
	name, ok := v.(string)
	if !ok {
		name = fmt.Sprint(v)
	}
	if !snapshotName().MatchString(name) {
		return "", failure("snapshot", label(c.path, "$"), "", "", "snapshot name %q expands to %q, which is not letters, digits, '_', '-', '.' (no path)", c.name, name)
	}
	return filepath.Join(c.dir, name+".json"), nil
}

func (c *snapshotChecker) Check(ctx context.Context, s *Subject) *result.Failure {
	got, f := at(ctx, "snapshot", c.path, s)
	if f != nil {
		return f
	}
	file, f := c.fileFor(s)
	if f != nil {
		return f
	}
	data, err := indentJSON(got)
	if err != nil {
		return failure("snapshot", label(c.path, "$"), "", "", "encode snapshot: %v", err)
	}
	if s.UpdateSnapshots {
		if old, err := regfile.ReadFile(file, MaxSnapshotBytes); err == nil && bytes.Equal(old, data) {
			return nil // up to date: not rewritten
		}
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return failure("snapshot", label(c.path, "$"), "", "", "update snapshot: %v", err)
		}
		if err := regfile.WriteFile(file, data, 0o644); err != nil { // never through a link
			return failure("snapshot", label(c.path, "$"), "", "", "update snapshot: %v", err)
		}
		s.SnapshotsWritten = append(s.SnapshotsWritten, file)
		return nil
	}
	want, err := regfile.ReadFile(file, MaxSnapshotBytes) // a named pipe would block a plain read forever
	if errors.Is(err, fs.ErrNotExist) {
		return failure("snapshot", label(c.path, "$"), file, Excerpt(got, maxActual),
			"snapshot %s does not exist; run with --update to create it", file)
	}
	if err != nil {
		return failure("snapshot", label(c.path, "$"), "", "", "read snapshot: %v", err)
	}
	wantDoc, err := DecodeJSON(want)
	if err != nil {
		return failure("snapshot", label(c.path, "$"), "", "", "snapshot %s is not JSON: %v", file, err)
	}
	if Equal(wantDoc, got) {
		return nil
	}
	w, g := Excerpt(wantDoc, maxActual), Excerpt(got, maxActual)
	// Compare the snapshot as it would be written now, so formatting differences do not show.
	wantNorm, err := indentJSON(wantDoc)
	if err != nil {
		wantNorm = want
	}
	return failure("snapshot", label(c.path, "$"), w, g, "%s differs from snapshot %s (run with --update to accept):\n%s",
		label(c.path, "$"), file, unifiedDiff(file, wantNorm, data))
}

// maxDiffLines bounds the unified diff a snapshot failure quotes.
const maxDiffLines = 80

// MaxSnapshotBytes bounds a snapshot file: a larger one (or a named pipe, a device) is refused,
// unread.
const MaxSnapshotBytes = 64 << 20

// unifiedDiff is the unified diff from the snapshot to the new document, cut at maxDiffLines.
func unifiedDiff(file string, want, got []byte) string {
	d := diff.Diff(file+" (snapshot)", want, "response", got)
	lines := strings.Split(strings.TrimRight(string(d), "\n"), "\n")
	if len(lines) > 0 && strings.HasPrefix(lines[0], "diff ") {
		lines = lines[1:] // the header repeats the names the ---/+++ lines give
	}
	if len(lines) > maxDiffLines {
		lines = append(lines[:maxDiffLines], fmt.Sprintf("… %d more lines of diff", len(lines)-maxDiffLines))
	}
	return strings.Join(lines, "\n")
}
