//go:build linux

package cli

import (
	"cmp"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// A file bomb: what a repository or a CI artefact may hold where mcpspec expects a file.
type fileBomb struct {
	name string
	// plant puts the bomb at path.
	plant func(t *testing.T, path string)
	// want is how mcpspec refuses it.
	want string
}

var fileBombs = []fileBomb{
	{"a named pipe with a silent writer", func(t *testing.T, p string) { holdOpen(t, mkfifo(t, filepath.Dir(p), filepath.Base(p))) },
		`is a named pipe, not a regular file`},
	{"a symbolic link to /dev/zero", func(t *testing.T, p string) {
		mkdirFor(t, p)
		if err := os.Symlink("/dev/zero", p); err != nil {
			t.Fatal(err)
		}
	}, `is a character device, not a regular file`},
	{"a sparse file of 3 GB", func(t *testing.T, p string) {
		mkdirFor(t, p)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Truncate(3 << 30); err != nil {
			t.Fatal(err)
		}
	}, `is 3\.0 GB, more than the [0-9.]+ [KMG]B mcpspec reads from such a file`},
}

func mkdirFor(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestFileBombsAreRefused runs every file bomb against every verb that reads such a file: the
// lockfile of a collection's audit: block or of audit, metrics.json in report, merge and
// compare, a committed README in docs --check, --args @FILE of load, --data, --metadata, a
// suppressions file, --against, a baseline. Each used to hang (a named pipe, surviving
// SIGTERM) or read until memory ran out (/dev/zero: 6.8 GB RSS; a sparse file); each is now
// refused at once, naming the file, with a config error.
func TestFileBombsAreRefused(t *testing.T) {
	runDir := func(t *testing.T, dir string) { mkdirFor(t, filepath.Join(dir, "runs/x/metrics.json")) }
	verbs := []struct {
		name  string
		file  string // where the bomb goes, relative to the test's directory
		setup func(t *testing.T, dir string)
		args  []string
		// code is the exit code when not ExitConfig.
		code ExitCode
		// pipes is set where a pipe is a legitimate input (<(…)), waited for under Ctrl-C
		// (TestInterruptWhileReadingAPipe): only the other bombs are refused.
		pipes bool
	}{
		{"test with an audit: block", ".mcpspec/tools.lock", func(t *testing.T, dir string) {
			writeFile(t, dir, "c.yaml", goodCollection+"audit:\n  failOn: low\n")
		}, []string{"test", "c.yaml"}, 0, false},
		{"audit --lockfile", "pins.lock", nil, []string{"audit", "--server", "testserver", "--lockfile", "pins.lock"}, 0, false},
		{"audit suppressions", ".mcpspec/audit-suppressions.yaml", nil, []string{"audit", "--server", "testserver"}, 0, false},
		{"audit --metadata", "meta.json", nil, []string{"audit", "--metadata", "meta.json"}, 0, false},
		{"score suppressions", ".mcpspec/audit-suppressions.yaml", nil, []string{"score", "--server", "testserver"}, 0, false},
		{"report", "runs/x/metrics.json", runDir, []string{"report", "runs/x"}, 0, false},
		{"merge", "runs/x/metrics.json", runDir, []string{"merge", "runs/x", "runs/x", "--out", "merged"}, 0, false},
		{"compare", "runs/x/metrics.json", runDir, []string{"compare", "runs/x", "runs/x"}, 0, false},
		{"docs --check", "docs/README.md", nil, []string{"docs", "--server", "testserver", "--check"}, 0, false},
		{"tokens --against", "tools.lock", nil, []string{"tokens", "--server", "testserver", "--against", "tools.lock"}, 0, false},
		{"test --data", "rows.csv", func(t *testing.T, dir string) { writeFile(t, dir, "c.yaml", goodCollection) },
			[]string{"test", "c.yaml", "--data", "rows.csv"}, 0, false},
		{"load --args @FILE", "args.json", nil, []string{"load", "--server", "testserver", "--tool", "echo", "--args", "@args.json", "--duration", "1s"}, 0, true},
		{"compare results files", "a.json", func(t *testing.T, dir string) { writeFile(t, dir, "b.json", "{}") },
			[]string{"compare", "a.json", "b.json"}, 0, false},
	}
	for _, v := range verbs {
		for _, b := range fileBombs {
			t.Run(v.name+"/"+b.name, func(t *testing.T) {
				if v.pipes && b.name == fileBombs[0].name {
					t.Skip("a pipe is a legitimate input here")
				}
				t.Parallel()
				dir := t.TempDir()
				if v.setup != nil {
					v.setup(t, dir)
				}
				b.plant(t, filepath.Join(dir, v.file))
				p := startMcpspec(t, dir, v.args...)
				code := p.wait(t, sweepBound)
				out := p.stdout.String() + p.stderr.String()
				want := regexp.QuoteMeta(v.file) + ` ` + b.want
				wantCode := cmp.Or(v.code, ExitConfig)
				if code != int(wantCode) || !regexp.MustCompile(want).MatchString(out) {
					t.Errorf("exit %d, want %d with output matching %s\nstdout:\n%s\nstderr:\n%s", code, wantCode, want, tail(p.stdout.String()), tail(p.stderr.String()))
				}
				assertNoPanic(t, p.stderr.String())
				p.assertNoLeftovers(t)
			})
		}
	}
}
