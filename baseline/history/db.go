package history

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/internal/clock"
	"github.com/mcpspec/mcpspec/internal/regfile"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"
)

// applicationID marks an mcpspec history database (PRAGMA application_id): "MCPh".
const applicationID = 0x4d435068

// schemaVersion is the PRAGMA user_version this build writes; [migrations] bring a database
// to it.
const schemaVersion = 1

// migrations returns the statements that bring a database from version v to v+1, by v.
func migrations() []string {
	return []string{migrateV1}
}

// migrateV1 creates the runs table (version 0 → 1).
const migrateV1 = `CREATE TABLE runs (
		kind TEXT NOT NULL,
		id TEXT NOT NULL,
		dir TEXT NOT NULL,
		started INTEGER NOT NULL,
		duration_ms INTEGER NOT NULL,
		branch TEXT NOT NULL DEFAULT '',
		git_commit TEXT NOT NULL DEFAULT '',
		server TEXT NOT NULL DEFAULT '',
		verdict TEXT NOT NULL,
		exit_code INTEGER NOT NULL,
		output TEXT NOT NULL DEFAULT '',
		artifacts TEXT NOT NULL DEFAULT '',
		figures TEXT NOT NULL DEFAULT '{}',
		pass_rate REAL,
		p99_ms REAL,
		score REAL,
		PRIMARY KEY (kind, id)
	);
	CREATE INDEX runs_started ON runs (started);
	CREATE INDEX runs_trend ON runs (kind, branch, started);`

// busyTimeout is how long a write waits for another process's write to finish.
const busyTimeout = 10 * time.Second

var (
	// ErrForeign is returned by [Open] for a file that is not an mcpspec history database.
	ErrForeign = errors.New("not an mcpspec history database")
	// ErrNewer is returned by [Open] for a database written by a newer mcpspec.
	ErrNewer = errors.New("history database written by a newer mcpspec")
)

// DB is an open history database. Its methods may be called from several goroutines; several
// processes may have the same file open and write at once.
type DB struct {
	db   *sql.DB
	path string
}

// Open opens the history database at path (typically [DBPath]), creating it (0600, and its
// directory) when missing and bringing its schema up to date. A file of another program — not
// SQLite, or SQLite without mcpspec's application id — is refused with [ErrForeign] and left
// untouched.
func Open(ctx context.Context, path string) (*DB, error) {
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("open history %s: the path may not contain ? or #", path)
	}
	if err := create(path); err != nil {
		return nil, fmt.Errorf("open history %s: %w", path, err)
	}
	dsn := path + fmt.Sprintf("?_busy_timeout=%d&_journal_mode=WAL&_synchronous=NORMAL&_txlock=immediate", busyTimeout.Milliseconds())
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open history %s: %w", path, err)
	}
	h := &DB{db: db, path: path}
	// SQLite answers SQLITE_BUSY without waiting in a few cases the busy timeout does not
	// cover (another process switching a new file to WAL, or recovering the WAL): those are
	// retried until the same timeout.
	deadline := time.Now().Add(busyTimeout)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		err = h.migrate(ctx)
		if err == nil {
			return h, nil
		}
		if !isBusy(err) || time.Now().Add(wait).After(deadline) {
			break
		}
		if serr := clock.Sleep(ctx, wait); serr != nil {
			err = serr
			break
		}
	}
	db.Close()
	return nil, fmt.Errorf("open history %s: %w", path, err)
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (the database is locked by another
// connection), extended codes included.
func isBusy(err error) bool {
	var se interface{ Code() int }
	return errors.As(err, &se) && se.Code()&0xff == 5
}

// create makes path an empty 0600 file when it does not exist, and checks that an existing one
// is a SQLite database (or empty), so that SQLite never writes into a file of another kind.
func create(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("%w: %s, not a file", ErrForeign, regfile.Kind(st.Mode()))
	}
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%w: not a regular file", ErrForeign)
	}
	magic := make([]byte, 16)
	n, err := io.ReadFull(f, magic)
	if n == 0 && (err == io.EOF || err == io.ErrUnexpectedEOF) {
		return nil
	}
	if !bytes.Equal(magic[:n], []byte("SQLite format 3\x00")) {
		return fmt.Errorf("%w: not a SQLite file", ErrForeign)
	}
	return nil
}

// migrate checks the database's identity and brings its schema to schemaVersion, in one
// immediate transaction (two processes migrating at once take turns).
func (h *DB) migrate(ctx context.Context) error {
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var app, version, tables int
	if err := tx.QueryRowContext(ctx, "PRAGMA application_id").Scan(&app); err != nil {
		return err
	}
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&tables); err != nil {
		return err
	}
	switch {
	case app == 0 && version == 0 && tables == 0:
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", applicationID)); err != nil {
			return err
		}
	case app != applicationID:
		return fmt.Errorf("%w: a SQLite database of another program (application_id %#x)", ErrForeign, app)
	case version > schemaVersion:
		return fmt.Errorf("%w: schema version %d, this build reads up to %d", ErrNewer, version, schemaVersion)
	case version == schemaVersion:
		return nil
	}
	steps := migrations()
	for v := version; v < schemaVersion; v++ {
		if _, err := tx.ExecContext(ctx, steps[v]); err != nil {
			return fmt.Errorf("migrate the schema to version %d: %w", v+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return err
	}
	return tx.Commit()
}

// Close closes the database.
func (h *DB) Close() error { return h.db.Close() }

// Run is one indexed run: its header and where its directory is.
type Run struct {
	Header
	// Dir is the run directory, as it was indexed (relative to the project, or absolute).
	Dir string `json:"dir"`
}

// Index reads runDir's run.json and adds the run to the index, replacing a row of the same
// kind and id. A missing or invalid run.json is an error (a *[CorruptError] when invalid).
func (h *DB) Index(ctx context.Context, runDir string) error {
	hd, err := ReadHeader(runDir)
	if err != nil {
		return fmt.Errorf("index %s: %w", runDir, err)
	}
	if _, err := insert(ctx, h.db, &Run{Header: *hd, Dir: runDir}); err != nil {
		return fmt.Errorf("index %s: %w", runDir, err)
	}
	return nil
}

// execer is what insert needs of a *sql.DB or a *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func insert(ctx context.Context, db execer, r *Run) (sql.Result, error) {
	figs, err := json.Marshal(r.Figures)
	if err != nil {
		return nil, err
	}
	if r.Figures == nil {
		figs = []byte("{}")
	}
	return db.ExecContext(ctx, `INSERT OR REPLACE INTO runs
		(kind, id, dir, started, duration_ms, branch, git_commit, server, verdict, exit_code, output, artifacts, figures, pass_rate, p99_ms, score)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.Kind, r.ID, r.Dir, r.Started.UnixMilli(), r.DurationMS, r.Branch, r.Commit, r.Server, r.Verdict, r.ExitCode, r.Output, r.Artifacts,
		string(figs), figure(r.Figures, FigurePassRate), figure(r.Figures, FigureP99), figure(r.Figures, FigureScore))
}

// figure is figs[key], or NULL.
func figure(figs map[string]float64, key string) any {
	if v, ok := figs[key]; ok {
		return v
	}
	return nil
}

// SkippedError is returned by [DB.Reindex] when some run directories could not be indexed:
// the others were.
type SkippedError struct {
	// Skipped are the run.json files left out, with why.
	Skipped []*CorruptError
}

func (e *SkippedError) Error() string {
	parts := make([]string, len(e.Skipped))
	for i, s := range e.Skipped {
		parts[i] = s.Error()
	}
	return fmt.Sprintf("skipped %d run(s): %s", len(e.Skipped), strings.Join(parts, "; "))
}

// Reindex rebuilds the index from the run directories under root (typically [RunsDir]):
// root/<kind>/<id>/run.json. Directories without a run.json (older runs) are left out silently;
// an invalid run.json is left out and named in a *[SkippedError], returned with the number of
// runs indexed. The index is replaced in one transaction: readers see the old one or the new.
func (h *DB) Reindex(ctx context.Context, root string) (n int, err error) {
	kinds, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("reindex %s: %w", root, err)
	}
	var runs []*Run
	var skipped []*CorruptError
	for _, k := range kinds {
		if !k.IsDir() || !plainName(k.Name()) {
			continue
		}
		ids, err := os.ReadDir(filepath.Join(root, k.Name()))
		if err != nil {
			return 0, fmt.Errorf("reindex %s: %w", root, err)
		}
		for _, id := range ids {
			if !id.IsDir() {
				continue
			}
			dir := filepath.Join(root, k.Name(), id.Name())
			hd, err := ReadHeader(dir)
			var ce *CorruptError
			switch {
			case errors.As(err, &ce):
				skipped = append(skipped, ce)
				continue
			case errors.Is(err, fs.ErrNotExist):
				continue
			case err != nil:
				return 0, fmt.Errorf("reindex %s: %w", root, err)
			case hd.Kind != k.Name() || hd.ID != id.Name():
				skipped = append(skipped, &CorruptError{Path: filepath.Join(dir, HeaderFile),
					Err: fmt.Errorf("names run %s/%s but lies in %s/%s", hd.Kind, hd.ID, k.Name(), id.Name())})
				continue
			}
			runs = append(runs, &Run{Header: *hd, Dir: dir})
		}
	}
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("reindex %s: %w", root, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "DELETE FROM runs"); err != nil {
		return 0, fmt.Errorf("reindex %s: %w", root, err)
	}
	for _, r := range runs {
		if _, err := insert(ctx, tx, r); err != nil {
			return 0, fmt.Errorf("reindex %s: %w", r.Dir, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("reindex %s: %w", root, err)
	}
	if len(skipped) > 0 {
		return len(runs), &SkippedError{Skipped: skipped}
	}
	return len(runs), nil
}

// Filter selects runs; zero fields select everything.
type Filter struct {
	// Kind is the verb ("test", "load" …).
	Kind string
	// Branch is the git branch.
	Branch string
	// Server is a part of the server SPEC.
	Server string
	// Since leaves out runs started before it.
	Since time.Time
	// Limit caps the number of runs (0: 50).
	Limit int
}

// DefaultLimit is the number of runs [DB.Runs] and [DB.Trend] return without a limit.
const DefaultLimit = 50

// Runs lists the runs f selects, newest first.
func (h *DB) Runs(ctx context.Context, f Filter) ([]Run, error) {
	var where []string
	var args []any
	if f.Kind != "" {
		where, args = append(where, "kind = ?"), append(args, f.Kind)
	}
	if f.Branch != "" {
		where, args = append(where, "branch = ?"), append(args, f.Branch)
	}
	if f.Server != "" {
		where, args = append(where, "instr(server, ?) > 0"), append(args, f.Server)
	}
	if !f.Since.IsZero() {
		where, args = append(where, "started >= ?"), append(args, f.Since.UnixMilli())
	}
	q := "SELECT kind, id, dir, started, duration_ms, branch, git_commit, server, verdict, exit_code, output, artifacts, figures FROM runs"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY started DESC, id DESC LIMIT ?"
	args = append(args, limit(f.Limit))
	return h.query(ctx, q, args...)
}

func limit(n int) int {
	if n <= 0 {
		return DefaultLimit
	}
	return n
}

func (h *DB) query(ctx context.Context, q string, args ...any) ([]Run, error) {
	rows, err := h.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		var r Run
		var started int64
		var figs string
		if err := rows.Scan(&r.Kind, &r.ID, &r.Dir, &started, &r.DurationMS, &r.Branch, &r.Commit, &r.Server,
			&r.Verdict, &r.ExitCode, &r.Output, &r.Artifacts, &figs); err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		r.Started = time.UnixMilli(started).UTC()
		if figs != "{}" && figs != "" {
			if err := json.Unmarshal([]byte(figs), &r.Figures); err != nil {
				return nil, fmt.Errorf("list runs: %s/%s: figures: %w", r.Kind, r.ID, err)
			}
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}

// Point is one run of a trend.
type Point struct {
	ID      string    `json:"id"`
	Started time.Time `json:"started"`
	Branch  string    `json:"branch,omitempty"`
	Verdict string    `json:"verdict"`
	// PassRate (test), P99MS (load) and Score (score) are nil when the run has none.
	PassRate *float64 `json:"passRate,omitempty"`
	P99MS    *float64 `json:"p99Ms,omitempty"`
	Score    *float64 `json:"score,omitempty"`
}

// Trend returns the last limit runs (0: 50) of kind on branch ("": every branch), oldest first,
// with their pass rate, p99 and score.
func (h *DB) Trend(ctx context.Context, branch, kind string, limitN int) ([]Point, error) {
	q := "SELECT id, started, branch, verdict, pass_rate, p99_ms, score FROM runs WHERE kind = ?"
	args := []any{kind}
	if branch != "" {
		q, args = q+" AND branch = ?", append(args, branch)
	}
	q += " ORDER BY started DESC, id DESC LIMIT ?"
	args = append(args, limit(limitN))
	rows, err := h.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("trend: %w", err)
	}
	defer rows.Close()
	var out []Point
	for rows.Next() {
		var p Point
		var started int64
		var pass, p99, score sql.NullFloat64
		if err := rows.Scan(&p.ID, &started, &p.Branch, &p.Verdict, &pass, &p99, &score); err != nil {
			return nil, fmt.Errorf("trend: %w", err)
		}
		p.Started = time.UnixMilli(started).UTC()
		p.PassRate, p.P99MS, p.Score = ptr(pass), ptr(p99), ptr(score)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("trend: %w", err)
	}
	slices.Reverse(out)
	return out, nil
}

func ptr(v sql.NullFloat64) *float64 {
	if !v.Valid {
		return nil
	}
	return &v.Float64
}

// Prune keeps the newest keep runs of each kind and removes the others: their rows, and their
// directories when they lie under root (typically [RunsDir]) and still hold a run.json. It
// returns the directories removed.
func (h *DB) Prune(ctx context.Context, root string, keep int) ([]string, error) {
	if keep < 1 {
		return nil, fmt.Errorf("prune: keep must be at least 1, got %d", keep)
	}
	rows, err := h.db.QueryContext(ctx, `SELECT kind, id, dir FROM (
		SELECT kind, id, dir, row_number() OVER (PARTITION BY kind ORDER BY started DESC, id DESC) AS n FROM runs
	) WHERE n > ?`, keep)
	if err != nil {
		return nil, fmt.Errorf("prune: %w", err)
	}
	type old struct{ kind, id, dir string }
	var olds []old
	for rows.Next() {
		var o old
		if err := rows.Scan(&o.kind, &o.id, &o.dir); err != nil {
			rows.Close()
			return nil, fmt.Errorf("prune: %w", err)
		}
		olds = append(olds, o)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("prune: %w", err)
	}
	var removed []string
	var errs []error
	for _, o := range olds {
		if within(root, o.dir) && plainName(o.id) {
			if _, err := os.Stat(filepath.Join(o.dir, HeaderFile)); err == nil {
				if err := os.RemoveAll(o.dir); err != nil {
					errs = append(errs, err)
					continue
				}
				removed = append(removed, o.dir)
			}
		}
		if _, err := h.db.ExecContext(ctx, "DELETE FROM runs WHERE kind = ? AND id = ?", o.kind, o.id); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("prune: %w", err)
	}
	return removed, nil
}

// within reports whether dir lies strictly below root.
func within(root, dir string) bool {
	ra, err1 := filepath.Abs(root)
	da, err2 := filepath.Abs(dir)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(ra, da)
	return err == nil && rel != "." && !strings.HasPrefix(rel, "..") && !filepath.IsAbs(rel)
}
