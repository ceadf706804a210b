package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/internal/redact"
	"github.com/mcpspec/mcpspec/internal/regfile"
)

// Layout of the history, relative to the project directory.
const (
	// DBPath is the index database.
	DBPath = ".mcpspec/history.db"
	// RunsDir holds one directory per kind, and one directory per run under it.
	RunsDir = ".mcpspec/runs"
	// HeaderFile is the name of a run directory's header.
	HeaderFile = "run.json"
	// MaxHeaderBytes bounds a run.json read back.
	MaxHeaderBytes = 1 << 20
)

// Keys of [Header.Figures]: the numbers a listing and a trend show. A verb records those that
// apply to it.
const (
	// FigurePassRate is the share of tests that passed, 0 to 1 (test).
	FigurePassRate = "passRate"
	// FigureTests is the number of tests run (test, detectors).
	FigureTests = "tests"
	// FigureFailed is the number of tests that failed or errored (test, detectors).
	FigureFailed = "failed"
	// FigureP99 is the 99th latency percentile in milliseconds (load).
	FigureP99 = "p99Ms"
	// FigureThroughput is the completed calls per second (load).
	FigureThroughput = "throughput"
	// FigureErrorRate is the share of calls that failed, 0 to 1 (load).
	FigureErrorRate = "errorRate"
	// FigureScore is the MCP score, 0 to 100 (score).
	FigureScore = "score"
	// FigureFindings is the number of findings (audit, fuzz, probe, detectors).
	FigureFindings = "findings"
)

// Header is a run's run.json: what the index holds of it.
type Header struct {
	// Kind is the verb: test, load, deadlock, race, head-of-line, fuzz, probe, audit, score.
	Kind string `json:"kind"`
	// ID names the run within its kind; it is the name of its directory.
	ID string `json:"id"`
	// Started is when the run began.
	Started time.Time `json:"started"`
	// DurationMS is how long it took, in milliseconds.
	DurationMS int64 `json:"durationMs"`
	// Branch and Commit are the git branch and commit of the working directory ("" outside git).
	Branch string `json:"branch,omitempty"`
	Commit string `json:"commit,omitempty"`
	// Server is the server SPEC (or collection) the run was against, its secrets masked.
	Server string `json:"server,omitempty"`
	// Verdict is the outcome in one word: pass, fail, error, timeout, interrupted, not-tested …
	Verdict string `json:"verdict"`
	// ExitCode is mcpspec's exit code for the run.
	ExitCode int `json:"exitCode"`
	// Output is the file of the verb's JSON output: in Artifacts when set, else in the run
	// directory ("" when none).
	Output string `json:"output,omitempty"`
	// Artifacts is the directory holding the run's files when the verb writes one of its own
	// elsewhere (a load run's --out directory), as given; "" when they are in the run directory.
	Artifacts string `json:"artifacts,omitempty"`
	// Figures are the run's key numbers, by the Figure… keys.
	Figures map[string]float64 `json:"figures,omitempty"`
}

// plainName reports whether s may be a kind or an id: a path element with no surprises
// (ASCII letters, digits, '.', '_' and '-', not starting with a dot or dash, at most 100 bytes).
func plainName(s string) bool {
	if s == "" || len(s) > 100 {
		return false
	}
	for i, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || (i > 0 && (r == '.' || r == '_' || r == '-'))
		if !ok {
			return false
		}
	}
	return true
}

// Check reports what makes h unusable as an index row.
func (h *Header) Check() error {
	switch {
	case !plainName(h.Kind):
		return fmt.Errorf("kind %q is not a plain name", h.Kind)
	case !plainName(h.ID):
		return fmt.Errorf("id %q is not a plain name", h.ID)
	case h.Started.IsZero():
		return errors.New("no start time")
	case h.Verdict == "":
		return errors.New("no verdict")
	}
	return nil
}

// CorruptError is a run.json that cannot be read or makes no sense; [DB.Reindex] skips it.
type CorruptError struct {
	// Path is the run.json.
	Path string
	Err  error
}

func (e *CorruptError) Error() string { return fmt.Sprintf("%s: %v", e.Path, e.Err) }
func (e *CorruptError) Unwrap() error { return e.Err }

// ReadHeader reads dir's run.json (bounded); a file that is not valid is a *[CorruptError].
func ReadHeader(dir string) (*Header, error) {
	p := filepath.Join(dir, HeaderFile)
	b, err := regfile.ReadFile(p, MaxHeaderBytes)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, &CorruptError{Path: p, Err: err}
	}
	var h Header
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&h); err != nil {
		return nil, &CorruptError{Path: p, Err: fmt.Errorf("not a run header: %w", err)}
	}
	if err := h.Check(); err != nil {
		return nil, &CorruptError{Path: p, Err: err}
	}
	return &h, nil
}

// CreateDir makes a new run directory root/kind/<id> for a run that started at t and returns
// it with its id: the UTC time to the millisecond, with -2, -3 … appended when taken.
func CreateDir(root, kind string, t time.Time) (dir, id string, err error) {
	if !plainName(kind) {
		return "", "", fmt.Errorf("create run directory: kind %q is not a plain name", kind)
	}
	parent := filepath.Join(root, kind)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", "", fmt.Errorf("create run directory: %w", err)
	}
	base := t.UTC().Format("20060102T150405.000Z")
	base = strings.Replace(base, ".", "-", 1)
	for n := 1; n < 1000; n++ {
		id = base
		if n > 1 {
			id = fmt.Sprintf("%s-%d", base, n)
		}
		dir = filepath.Join(parent, id)
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, id, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", "", fmt.Errorf("create run directory: %w", err)
		}
	}
	return "", "", fmt.Errorf("create run directory: too many runs at %s in %s", base, parent)
}

// WriteFile writes data to dir/name (0600) with every secret of m masked (nil: none), through
// a temporary file renamed into place, so a reader never sees half a file.
func WriteFile(dir, name string, data []byte, m *redact.Masker) error {
	if m != nil {
		data = []byte(m.Mask(string(data)))
	}
	tmp, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Join(dir, name), err)
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o600)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), filepath.Join(dir, name))
	}
	if werr != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", filepath.Join(dir, name), werr)
	}
	return nil
}

// WriteHeader writes h as dir's run.json, its secrets masked by m (nil: none).
func WriteHeader(dir string, h *Header, m *redact.Masker) error {
	if err := h.Check(); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Join(dir, HeaderFile), err)
	}
	b, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Join(dir, HeaderFile), err)
	}
	return WriteFile(dir, HeaderFile, append(b, '\n'), m)
}
