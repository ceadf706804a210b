package history_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/baseline/history"
	"github.com/mcpspec/mcpspec/internal/redact"
)

// writeRun makes a run directory under root the way the CLI does and returns it.
func writeRun(t testing.TB, root string, h history.Header) string {
	t.Helper()
	dir, id, err := history.CreateDir(root, h.Kind, h.Started)
	if err != nil {
		t.Fatal(err)
	}
	h.ID = id
	if err := history.WriteHeader(dir, &h, nil); err != nil {
		t.Fatal(err)
	}
	return dir
}

func open(t testing.TB, path string) *history.DB {
	t.Helper()
	db, err := history.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

var t0 = time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)

// sample is three test runs on main, one on a branch, a load run and a score run.
func sample(t *testing.T, root string) []string {
	var dirs []string
	for i, h := range []history.Header{
		{Kind: "test", Started: t0, Branch: "main", Verdict: "pass", Figures: map[string]float64{history.FigurePassRate: 1, history.FigureTests: 4}},
		{Kind: "test", Started: t0.Add(time.Hour), Branch: "main", Verdict: "fail", ExitCode: 1, Figures: map[string]float64{history.FigurePassRate: 0.75, history.FigureTests: 4, history.FigureFailed: 1}},
		{Kind: "test", Started: t0.Add(2 * time.Hour), Branch: "main", Verdict: "pass", Server: "testserver", Figures: map[string]float64{history.FigurePassRate: 1}},
		{Kind: "test", Started: t0.Add(3 * time.Hour), Branch: "feature/x", Verdict: "pass", Figures: map[string]float64{history.FigurePassRate: 0.5}},
		{Kind: "load", Started: t0.Add(4 * time.Hour), Branch: "main", Verdict: "pass", Server: "python -m srv", Figures: map[string]float64{history.FigureP99: 12.5}},
		{Kind: "score", Started: t0.Add(5 * time.Hour), Verdict: "pass", Figures: map[string]float64{history.FigureScore: 87}},
	} {
		h.DurationMS = int64(i * 100)
		dirs = append(dirs, writeRun(t, root, h))
	}
	return dirs
}

func ids(runs []history.Run) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.Kind+"/"+r.ID)
	}
	return out
}

func TestIndexAndQuery(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	root := filepath.Join(tmp, "runs")
	db := open(t, filepath.Join(tmp, "history.db"))
	dirs := sample(t, root)
	for _, d := range dirs {
		if err := db.Index(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	// Indexing again replaces, never duplicates.
	if err := db.Index(ctx, dirs[0]); err != nil {
		t.Fatal(err)
	}
	id := func(i int) string { return filepath.Base(filepath.Dir(dirs[i])) + "/" + filepath.Base(dirs[i]) }
	for _, tc := range []struct {
		name string
		f    history.Filter
		want []string
	}{
		{"all newest first", history.Filter{}, []string{id(5), id(4), id(3), id(2), id(1), id(0)}},
		{"kind", history.Filter{Kind: "test"}, []string{id(3), id(2), id(1), id(0)}},
		{"branch", history.Filter{Branch: "main", Kind: "test"}, []string{id(2), id(1), id(0)}},
		{"server part", history.Filter{Server: "python"}, []string{id(4)}},
		{"since", history.Filter{Since: t0.Add(4 * time.Hour)}, []string{id(5), id(4)}},
		{"limit", history.Filter{Limit: 2}, []string{id(5), id(4)}},
		{"nothing", history.Filter{Kind: "race"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs, err := db.Runs(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, ids(runs)); d != "" {
				t.Errorf("runs (-want +got):\n%s", d)
			}
		})
	}
	runs, err := db.Runs(ctx, history.Filter{Kind: "test", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := runs[0]; got.Dir != dirs[3] || got.Branch != "feature/x" || got.Figures[history.FigurePassRate] != 0.5 || got.DurationMS != 300 || !got.Started.Equal(t0.Add(3*time.Hour)) {
		t.Errorf("run = %+v", got)
	}

	trend, err := db.Trend(ctx, "main", "test", 0)
	if err != nil {
		t.Fatal(err)
	}
	var rates []float64
	for _, p := range trend {
		rates = append(rates, *p.PassRate)
	}
	if d := cmp.Diff([]float64{1, 0.75, 1}, rates); d != "" {
		t.Errorf("trend pass rates, oldest first (-want +got):\n%s", d)
	}
	lt, err := db.Trend(ctx, "", "load", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(lt) != 1 || lt[0].P99MS == nil || *lt[0].P99MS != 12.5 || lt[0].PassRate != nil {
		t.Errorf("load trend = %+v", lt)
	}
}

func TestReindexGivesTheSameRows(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	root := filepath.Join(tmp, "runs")
	path := filepath.Join(tmp, "history.db")
	db := open(t, path)
	for _, d := range sample(t, root) {
		if err := db.Index(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	before, err := db.Runs(ctx, history.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(path + suffix)
	}
	db2 := open(t, path)
	n, err := db2.Reindex(ctx, root)
	if err != nil || n != len(before) {
		t.Fatalf("Reindex = %d, %v; want %d, nil", n, err, len(before))
	}
	after, err := db2.Runs(ctx, history.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(before, after); d != "" {
		t.Errorf("rows after reindex (-before +after):\n%s", d)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := st.Mode().Perm(); m != 0o600 {
		t.Errorf("history.db mode = %v, want 0600", m)
	}
}

func TestReindexSkipsCorruptHeaders(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	root := filepath.Join(tmp, "runs")
	sample(t, root)
	bad := filepath.Join(root, "test", "broken")
	misplaced := filepath.Join(root, "race", "elsewhere")
	old := filepath.Join(root, "load", "20250101T000000Z") // a load run from before run.json
	for _, d := range []string{bad, misplaced, old} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(bad, history.HeaderFile), []byte(`{"kind": "test", "id": `), 0o644)
	os.WriteFile(filepath.Join(misplaced, history.HeaderFile), []byte(`{"kind":"race","id":"other","started":"2026-01-01T00:00:00Z","verdict":"pass"}`), 0o644)
	os.WriteFile(filepath.Join(root, "latest.json"), []byte(`{}`), 0o644)

	db := open(t, filepath.Join(tmp, "history.db"))
	n, err := db.Reindex(ctx, root)
	var se *history.SkippedError
	if !errors.As(err, &se) {
		t.Fatalf("Reindex error = %v, want a *SkippedError", err)
	}
	if n != 6 {
		t.Errorf("indexed %d runs, want 6", n)
	}
	var files []string
	for _, s := range se.Skipped {
		files = append(files, s.Path)
	}
	want := []string{filepath.Join(misplaced, history.HeaderFile), filepath.Join(bad, history.HeaderFile)}
	if d := cmp.Diff(want, files); d != "" {
		t.Errorf("skipped (-want +got):\n%s", d)
	}
	if !strings.Contains(err.Error(), filepath.Join(bad, history.HeaderFile)) {
		t.Errorf("error %q does not name the corrupt file", err)
	}
	if err := db.Index(ctx, bad); !errors.As(err, new(*history.CorruptError)) {
		t.Errorf("Index(corrupt) = %v, want a *CorruptError", err)
	}
}

func TestForeignFilesRefused(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	text := filepath.Join(tmp, "notes.db")
	os.WriteFile(text, []byte("my notes, not a database\n"), 0o644)
	other := filepath.Join(tmp, "other.db")
	db := open(t, other)
	db.Close()
	// Make other.db a database of another program: a table of its own, no application id.
	{
		db, err := sql.Open("sqlite", other) // the driver history registers
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, "PRAGMA application_id = 42"); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
	for _, p := range []string{text, other, tmp} {
		before, _ := os.ReadFile(p)
		_, err := history.Open(ctx, p)
		if !errors.Is(err, history.ErrForeign) {
			t.Errorf("Open(%s) = %v, want ErrForeign", filepath.Base(p), err)
			continue
		}
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not name the file", err)
		}
		if after, _ := os.ReadFile(p); string(after) != string(before) {
			t.Errorf("Open(%s) changed the file", p)
		}
	}
}

func TestPrune(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	root := filepath.Join(tmp, "runs")
	db := open(t, filepath.Join(tmp, "history.db"))
	dirs := sample(t, root)
	outside := writeRun(t, filepath.Join(tmp, "elsewhere"), history.Header{Kind: "test", Started: t0.Add(-time.Hour), Verdict: "pass"})
	for _, d := range append(dirs, outside) {
		if err := db.Index(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := db.Prune(ctx, root, 2)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{dirs[1], dirs[0]}, removed); d != "" {
		t.Errorf("removed (-want +got):\n%s", d)
	}
	for i, d := range dirs {
		_, err := os.Stat(d)
		if gone := i < 2; gone != (err != nil) {
			t.Errorf("run %d: stat = %v", i, err)
		}
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("a run outside root was removed: %v", err)
	}
	runs, _ := db.Runs(ctx, history.Filter{Kind: "test"})
	if len(runs) != 2 {
		t.Errorf("%d test rows left, want 2", len(runs))
	}
}

func TestWriteHeaderMasks(t *testing.T) {
	dir := t.TempDir()
	m := redact.NewMasker()
	m.Add("s3cr3t-token-value")
	h := &history.Header{Kind: "test", ID: "x", Started: t0, Verdict: "pass", Server: "https://h/mcp?key=s3cr3t-token-value"}
	if err := history.WriteHeader(dir, h, m); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, history.HeaderFile))
	if strings.Contains(string(b), "s3cr3t") {
		t.Errorf("run.json holds the secret:\n%s", b)
	}
	if err := history.WriteHeader(dir, &history.Header{Kind: "../x", ID: "y", Started: t0, Verdict: "pass"}, nil); err == nil {
		t.Error("a kind with a path in it was written")
	}
}

// writerEnv makes the test binary a second writer process (see TestTwoWriters).
const writerEnv = "MCPSPEC_HISTORY_TEST_WRITER"

// TestTwoWriters has two processes index runs into one database at once, each through its own
// handle: none fails on a busy database and every row is there.
func TestTwoWriters(t *testing.T) {
	if spec := os.Getenv(writerEnv); spec != "" {
		writer(t, spec)
		return
	}
	ctx := context.Background()
	tmp := t.TempDir()
	path := filepath.Join(tmp, "history.db")
	const perWriter = 40
	var wg sync.WaitGroup
	errs := make([]error, 2)
	outs := make([][]byte, 2)
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(cctx, os.Args[0], "-test.run=^TestTwoWriters$", "-test.count=1")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%s|%d|%d", writerEnv, path, filepath.Join(tmp, "runs"+strconv.Itoa(w)), w, perWriter))
			outs[w], errs[w] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for w := range 2 {
		if errs[w] != nil {
			t.Fatalf("writer %d: %v\n%s", w, errs[w], outs[w])
		}
	}
	db := open(t, path)
	runs, err := db.Runs(ctx, history.Filter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2*perWriter {
		t.Errorf("%d rows, want %d", len(runs), 2*perWriter)
	}
}

// writer opens the database (migrating it, perhaps at the same time as the other writer) and
// indexes n runs of its own kind, one at a time.
func writer(t *testing.T, spec string) {
	parts := strings.Split(spec, "|")
	path, root, w := parts[0], parts[1], parts[2]
	n, _ := strconv.Atoi(parts[3])
	ctx := context.Background()
	db := open(t, path)
	for i := range n {
		d := writeRun(t, root, history.Header{Kind: "writer" + w, Started: t0.Add(time.Duration(i) * time.Second), Verdict: "pass"})
		if err := db.Index(ctx, d); err != nil {
			t.Fatalf("writer %s, run %d: %v", w, i, err)
		}
	}
}
