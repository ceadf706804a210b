//go:build linux

package interop

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// examplesRunBound bounds one `mcpspec test` of an example collection.
const examplesRunBound = 90 * time.Second

// TestExamplesAgainstRealServers runs every example collection in examples/ with the real
// mcpspec binary against the server it was written for (the built-in reference server, or the
// pinned Node servers), twice in a row on the same state, and checks that every test passes
// both times, that the JUnit report says so, and that no server process outlives mcpspec.
func TestExamplesAgainstRealServers(t *testing.T) {
	t.Parallel()
	requireNodePeer(t, "@modelcontextprotocol/server-everything")
	requireNodePeer(t, "@modelcontextprotocol/server-filesystem")
	exe := buildMcpspec(t)
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		file string
		args func(t *testing.T) []string
	}{
		// Against `mcpspec testserver`, as the README's first command runs it.
		{"quickstart.yaml", func(*testing.T) []string { return nil }},
		{"server-everything.yaml", func(*testing.T) []string { return nil }},
		// Sampling, elicitation and roots answered by client: rules, progress counted.
		{"server-everything-client.yaml", func(*testing.T) []string { return nil }},
		// One root for both runs: the second must find the state the first left.
		{"server-filesystem.yaml", func(t *testing.T) []string { return []string{"--var", "root=" + t.TempDir()} }},
	}
	listed, err := filepath.Glob(filepath.Join(repo, "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != len(cases) {
		t.Errorf("examples/ holds %d collections and this test runs %d: add the new one to the cases", len(listed), len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			// The collections start their server as `node interop/node_modules/…`, relative to
			// the working directory: a scratch directory with an interop link keeps the run's
			// .mcpspec state out of the repository.
			work := t.TempDir()
			if err := os.Symlink(filepath.Join(repo, "interop"), filepath.Join(work, "interop")); err != nil {
				t.Fatal(err)
			}
			extra := tc.args(t)
			for run := 1; run <= 2; run++ {
				junit := filepath.Join(work, "out", fmt.Sprintf("junit-%d.xml", run))
				args := append([]string{"test", filepath.Join(repo, "examples", tc.file), "--reporter", "junit=" + junit}, extra...)
				runExample(t, exe, work, fmt.Sprintf("%s (run %d of 2)", tc.file, run), args)
				checkPassingJUnit(t, junit)
			}
		})
	}
}

// runExample runs mcpspec with args in dir and fails the test unless it exits 0 and leaves no
// process behind.
func runExample(t *testing.T, exe, dir, what string, args []string) {
	t.Helper()
	marker := newMarker()
	ctx, cancel := context.WithTimeout(context.Background(), examplesRunBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir = dir
	cmd.Env = peerEnv(markerVar+"="+marker, "NO_COLOR=1")
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("mcpspec test %s did not finish within %v\n%s%s", what, examplesRunBound, tail(stdout.Bytes(), 4000), tail(stderr.Bytes(), 2000))
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("run mcpspec: %v", err)
	}
	if err != nil {
		t.Errorf("mcpspec test %s exited with %d, want 0\nstdout:\n%s\nstderr:\n%s", what, ee.ExitCode(), tail(stdout.Bytes(), 8000), tail(stderr.Bytes(), 2000))
	}
	assertNoMarkedProcesses(t, marker)
}

// buildMcpspec returns the path of the mcpspec binary built from cmd/mcpspec, building it on
// the first call of the test binary (see goBuild).
func buildMcpspec(t *testing.T) string {
	t.Helper()
	return goBuild(t, "../cmd/mcpspec")
}

// goBuild returns the binary of the Go package pkg (a path relative to this directory or a
// module path), building it on the first call for pkg of the test binary: several tests run
// the same binaries, and each link took seconds on 2 cores. Tests that ask for the same
// package while it builds wait for that build.
func goBuild(t *testing.T, pkg string) string {
	t.Helper()
	b := &builtBinaries
	b.mu.Lock()
	if b.byPkg == nil {
		b.byPkg = map[string]*builtBinary{}
	}
	bin := b.byPkg[pkg]
	if bin == nil {
		bin = &builtBinary{}
		b.byPkg[pkg] = bin
	}
	if b.dir == "" && b.err == nil {
		b.dir, b.err = os.MkdirTemp("", "mcpspec-interop-")
	}
	dir, dirErr := b.dir, b.err
	b.mu.Unlock()
	bin.once.Do(func() {
		if dirErr != nil {
			bin.err = dirErr
			return
		}
		goTool, err := exec.LookPath("go")
		if err != nil {
			bin.err = fmt.Errorf("go not on PATH: %w", err)
			return
		}
		out, err := os.MkdirTemp(dir, "bin-")
		if err != nil {
			bin.err = err
			return
		}
		exe := filepath.Join(out, path.Base(pkg))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if log, err := exec.CommandContext(ctx, goTool, "build", "-o", exe, pkg).CombinedOutput(); err != nil {
			bin.err = fmt.Errorf("go build %s: %w\n%s", pkg, err, log)
			return
		}
		bin.exe = exe
	})
	if bin.err != nil {
		t.Fatal(bin.err)
	}
	return bin.exe
}

// builtBinaries are the binaries goBuild built, one per package, under dir, which TestMain
// removes.
var builtBinaries struct {
	mu    sync.Mutex // guards dir, err and byPkg
	dir   string
	err   error
	byPkg map[string]*builtBinary
}

// builtBinary is one package's build.
type builtBinary struct {
	once sync.Once
	exe  string
	err  error
}

// checkPassingJUnit asserts that the JUnit report at path has tests, all passed.
func checkPassingJUnit(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no JUnit report: %v", err)
	}
	var doc struct {
		Suites []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Errors   int    `xml:"errors,attr"`
			Skipped  int    `xml:"skipped,attr"`
			Cases    []struct {
				Name string `xml:"name,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("the JUnit report is not XML: %v\n%s", err, tail(b, 2000))
	}
	if len(doc.Suites) != 1 {
		t.Fatalf("JUnit report: %d suites, want 1", len(doc.Suites))
	}
	s := doc.Suites[0]
	if s.Tests == 0 || s.Tests != len(s.Cases) || s.Failures != 0 || s.Errors != 0 || s.Skipped != 0 {
		t.Errorf("JUnit suite %q: tests=%d cases=%d failures=%d errors=%d skipped=%d, want every test passed",
			s.Name, s.Tests, len(s.Cases), s.Failures, s.Errors, s.Skipped)
	}
	t.Logf("JUnit suite %q: %d tests passed", s.Name, s.Tests)
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("MCPSPEC_CONSUMERS") == "1" {
			t.Fatalf("xmllint is required when MCPSPEC_CONSUMERS=1: %v", err)
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	xsd := filepath.Join("..", "testdata", "junit", "junit.xsd")
	if out, err := exec.CommandContext(ctx, xmllint, "--noout", "--schema", xsd, path).CombinedOutput(); err != nil {
		t.Errorf("xmllint rejects the JUnit report: %v\n%s", err, out)
	}
}
