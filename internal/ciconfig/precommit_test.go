package ciconfig

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestPreCommitHooksFile decodes .pre-commit-hooks.yaml strictly (the keys pre-commit knows)
// and checks the hooks' entries and file patterns.
func TestPreCommitHooksFile(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", ".pre-commit-hooks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var hooks []struct {
		ID            string   `yaml:"id"`
		Name          string   `yaml:"name"`
		Description   string   `yaml:"description"`
		Entry         string   `yaml:"entry"`
		Language      string   `yaml:"language"`
		Files         string   `yaml:"files"`
		Types         []string `yaml:"types"`
		PassFilenames *bool    `yaml:"pass_filenames"`
		RequireSerial bool     `yaml:"require_serial"`
		Args          []string `yaml:"args"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(&hooks); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, h := range hooks {
		if h.Language != "golang" || h.Name == "" || h.Files == "" {
			t.Errorf("hook %s: language %q, name %q, files %q", h.ID, h.Language, h.Name, h.Files)
		}
		got[h.ID] = h.Entry
	}
	want := map[string]string{"mcpspec-validate": "mcpspec validate", "mcpspec-test-fast": "mcpspec test --tag fast --skip-load --bail"}
	for id, entry := range want {
		if got[id] != entry {
			t.Errorf("hook %s: entry %q, want %q", id, got[id], entry)
		}
	}
}

const fastCollection = `schemaVersion: "1.0"
name: Fast
server: testserver
tests:
  - name: Echo is fast
    tags: [fast]
    call: echo
    with: {text: hi}
    expect:
      - contains: hi
  - name: A test the hook leaves out, failing
    call: echo
    with: {text: hi}
    expect:
      - contains: bye
`

const brokenCollection = `schemaVersion: "1.0"
name: Broken
server: testserver
tests:
  - name: Misspelt key
    cal: echo
`

// TestPreCommitTryRepo runs the hooks with Debian's pre-commit (pre-commit try-repo) on a
// repository with collections: mcpspec-test-fast passes on the good collections/ (its failing
// untagged test left out), mcpspec-validate fails on a broken file with its file:line. pre-commit builds this module with go install ./... (language: golang)
// offline: GOPROXY=off and GOFLAGS=-mod=mod, with GOMODCACHE pointing at the module cache this
// test already uses, so it runs in the loopback-only namespace too. It runs only with
// MCPSPEC_PRECOMMIT=1 (.ci/run sets it): pre-commit builds the module from its own clone, whose
// packages miss the build cache (their directory is part of the key): a few minutes on a loaded
// machine, for every try-repo run (each has a store of its own), so the test makes one.
func TestPreCommitTryRepo(t *testing.T) {
	if os.Getenv("MCPSPEC_PRECOMMIT") != "1" {
		t.Skip("set MCPSPEC_PRECOMMIT=1: pre-commit builds the whole module from a copy of it (minutes on a cold cache)")
	}
	pc, err := exec.LookPath("pre-commit")
	if err != nil {
		t.Skip("pre-commit is not installed (apt-get install pre-commit)")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	modcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	self, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	env := append(os.Environ(), "PRE_COMMIT_HOME="+filepath.Join(dir, "pre-commit"), "GOPROXY=off", "GOFLAGS=-mod=mod -buildvcs=false",
		"GOMODCACHE="+strings.TrimSpace(string(modcache)), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GOTOOLCHAIN=local")
	sh := func(name string, args ...string) (string, error) {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = repo, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	write := func(name, text string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(repo, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := sh("git", "add", name); err != nil {
			t.Fatalf("git add: %v\n%s", err, out)
		}
	}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := sh("git", "init", "-q"); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	write("collections/fast.yaml", fastCollection)
	// A broken collection outside the collections/ that mcpspec-test-fast runs, but matched by
	// mcpspec-validate's files pattern: one try-repo run (one build) shows a hook pass and a
	// hook fail.
	write("more/collections/broken.yaml", brokenCollection)

	out, err := sh(pc, "try-repo", self, "--all-files")
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("try-repo: %v, want validate to fail\n%s", err, out)
	}
	if !regexp.MustCompile(`mcpspec test \(fast\)\.+Passed`).MatchString(out) {
		t.Errorf("try-repo: mcpspec-test-fast did not pass on collections/:\n%s", out)
	}
	if !regexp.MustCompile(`mcpspec validate\.+Failed`).MatchString(out) || !strings.Contains(out, "more/collections/broken.yaml:6") {
		t.Errorf("try-repo: mcpspec-validate did not fail naming more/collections/broken.yaml:6:\n%s", out)
	}
	if strings.Contains(out, "collections/fast.yaml:") {
		t.Errorf("try-repo: a problem reported in the good collection:\n%s", out)
	}
}
