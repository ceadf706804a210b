package baseline

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/internal/redact"
	"github.com/mcpspec/mcpspec/internal/regfile"
	"github.com/mcpspec/mcpspec/result"
)

// Layout of the store, relative to the project directory given to every function.
const (
	// StoreDir is the per-project state directory.
	StoreDir = ".mcpspec"
	// BaselinesDir holds one NAME.json per baseline.
	BaselinesDir = StoreDir + "/baselines"
	// LatestPath is the most recent run, written after every `mcpspec test`.
	LatestPath = StoreDir + "/runs/latest.json"
)

// maxNameLen caps a sanitized name, in bytes, well under every filesystem's limit.
const maxNameLen = 100

var (
	// ErrNotFound is returned when a baseline or the latest run does not exist. The error also
	// matches fs.ErrNotExist.
	ErrNotFound = errors.New("not found")
	// ErrInvalidName is returned for a baseline name with nothing usable in it.
	ErrInvalidName = errors.New("invalid baseline name")
	// ErrSchemaVersion is returned for a file that is not an mcpspec results document of a
	// version this build reads.
	ErrSchemaVersion = errors.New("unsupported results schemaVersion")
)

// SanitizeName turns a baseline name — typically a git branch — into a safe file stem:
//
//   - ASCII letters, digits, '.', '_' and '-' are kept; every other character (including '/',
//     '\', ':', spaces and non-ASCII) becomes '-', so "feature/x" → "feature-x";
//   - runs of '-' collapse to one, and leading or trailing '.' and '-' are trimmed (no hidden
//     files, no "..", no trailing dot for Windows);
//   - Windows device names (CON, NUL, COM1 …) get a '_' appended;
//   - the result is cut to 100 bytes.
//
// Distinct names can map to one file ("feature/x" and "feature-x"); that is deliberate, the
// store is keyed by the sanitized name. An empty result is [ErrInvalidName].
func SanitizeName(name string) (string, error) {
	var b strings.Builder
	dash := false
	for _, r := range strings.TrimSpace(name) {
		ok := r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
		if !ok || r == '-' {
			if !dash {
				b.WriteByte('-')
			}
			dash = true
			continue
		}
		dash = false
		b.WriteRune(r)
	}
	s := strings.Trim(b.String(), ".-")
	if len(s) > maxNameLen {
		s = strings.TrimRight(s[:maxNameLen], ".-")
	}
	if s == "" {
		return "", fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	stem, _, _ := strings.Cut(s, ".")
	if reservedWindows(stem) {
		s += "_"
	}
	return s, nil
}

func reservedWindows(stem string) bool {
	switch strings.ToUpper(stem) {
	case "CON", "PRN", "AUX", "NUL",
		"COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9",
		"LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9":
		return true
	}
	return false
}

// Path returns where baseline name lives under the project directory dir:
// dir/.mcpspec/baselines/SANITIZED.json.
func Path(dir, name string) (string, error) {
	s, err := SanitizeName(name)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, filepath.FromSlash(BaselinesDir), s+".json"), nil
}

// Save writes run as baseline name (see [SanitizeName]) under dir, replacing any previous one
// atomically, and returns the file's path. The file's bytes pass through a [redact.Writer] over
// m (nil: none), so no secret of the run reaches the store in any form.
func Save(dir, name string, run *result.Run, m *redact.Masker) (string, error) {
	p, err := Path(dir, name)
	if err != nil {
		return "", fmt.Errorf("save baseline: %w", err)
	}
	if err := writeFile(p, run, m); err != nil {
		return "", fmt.Errorf("save baseline %q: %w", name, err)
	}
	return p, nil
}

// Load reads baseline name from dir. A missing baseline is [ErrNotFound].
func Load(dir, name string) (*result.Run, error) {
	p, err := Path(dir, name)
	if err != nil {
		return nil, fmt.Errorf("load baseline: %w", err)
	}
	run, err := LoadFile(p)
	if err != nil {
		return nil, fmt.Errorf("load baseline %q: %w", name, err)
	}
	return run, nil
}

// Remove deletes baseline name from dir. A missing baseline is [ErrNotFound].
func Remove(dir, name string) error {
	p, err := Path(dir, name)
	if err != nil {
		return fmt.Errorf("remove baseline: %w", err)
	}
	if err := os.Remove(p); err != nil {
		return fmt.Errorf("remove baseline %q: %w", name, notFound(err))
	}
	return nil
}

// Entry describes one stored baseline.
type Entry struct {
	// Name is the sanitized name (the file stem), which [Load] accepts.
	Name      string      `json:"name"`
	Path      string      `json:"path"`
	RunID     string      `json:"runId,omitempty"`
	StartedAt time.Time   `json:"startedAt"`
	Git       *result.Git `json:"git,omitempty"`
	Counts    Counts      `json:"counts"`
	// Problem is set when the file could not be read; the other fields are then empty.
	Problem string `json:"problem,omitempty"`
}

// List returns the baselines stored under dir, sorted by name. No store is an empty list.
// A file that cannot be read is listed with its Problem rather than failing the listing.
func List(dir string) ([]Entry, error) {
	base := filepath.Join(dir, filepath.FromSlash(BaselinesDir))
	des, err := os.ReadDir(base)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list baselines: %w", err)
	}
	var out []Entry
	for _, de := range des {
		name, ok := strings.CutSuffix(de.Name(), ".json")
		if !ok || de.IsDir() || strings.HasPrefix(name, ".") {
			continue
		}
		e := Entry{Name: name, Path: filepath.Join(base, de.Name())}
		run, err := LoadFile(e.Path)
		if err != nil {
			e.Problem = err.Error()
		} else {
			e.RunID, e.StartedAt, e.Git, e.Counts = run.ID, run.StartedAt, run.Git, countsOf(run)
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// SaveLatest records run as the project's most recent run (dir/.mcpspec/runs/latest.json), so
// `mcpspec baseline save NAME` can promote it later. It returns the file's path. Like [Save], it
// masks the file's bytes with m (nil: none).
func SaveLatest(dir string, run *result.Run, m *redact.Masker) (string, error) {
	p := filepath.Join(dir, filepath.FromSlash(LatestPath))
	if err := writeFile(p, run, m); err != nil {
		return "", fmt.Errorf("save latest run: %w", err)
	}
	return p, nil
}

// LoadLatest reads the most recent run saved by [SaveLatest]; none is [ErrNotFound].
func LoadLatest(dir string) (*result.Run, error) {
	run, err := LoadFile(filepath.Join(dir, filepath.FromSlash(LatestPath)))
	if err != nil {
		return nil, fmt.Errorf("load latest run: %w", err)
	}
	return run, nil
}

// MaxRunBytes bounds a results document read by [LoadFile]: a larger one is refused, unread.
const MaxRunBytes = 256 << 20

// LoadFile reads a results document from path: a stored baseline, the latest run, or the
// output of the json reporter (its extra "summary" is ignored).
func LoadFile(path string) (*result.Run, error) {
	f, err := regfile.OpenLimit(path, MaxRunBytes) // a named pipe would block a plain open forever
	if err != nil {
		return nil, notFound(err)
	}
	defer f.Close()
	run, err := ReadRun(io.LimitReader(f, MaxRunBytes))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return run, nil
}

// ReadRun decodes one results document and checks its schemaVersion.
func ReadRun(r io.Reader) (*result.Run, error) {
	var run result.Run
	if err := json.NewDecoder(r).Decode(&run); err != nil {
		return nil, fmt.Errorf("decode results: %w", err)
	}
	if run.SchemaVersion != result.SchemaVersion {
		return nil, fmt.Errorf("%w %q (want %q): not an mcpspec results file, or from a newer mcpspec", ErrSchemaVersion, run.SchemaVersion, result.SchemaVersion)
	}
	return &run, nil
}

// WriteRun encodes run as an indented results document, setting schemaVersion when empty.
func WriteRun(w io.Writer, run *result.Run) error {
	r := *run
	if r.SchemaVersion == "" {
		r.SchemaVersion = result.SchemaVersion
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&r); err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	return nil
}

// writeFile writes run to p through a temporary file and a rename, so readers never see half a
// file and a crash leaves the previous version.
func writeFile(p string, run *result.Run, m *redact.Masker) (err error) {
	if run == nil {
		return errors.New("nil run")
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*.json")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	w := redact.NewWriter(f, m)
	if err := WriteRun(w, run); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), p)
}

// notFound adds ErrNotFound to a not-exist error, keeping the original in the chain.
func notFound(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return err
}
