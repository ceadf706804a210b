package ciconfig

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rhysd/actionlint"
	"gopkg.in/yaml.v3"

	"github.com/mcpspec/mcpspec/internal/golden"
)

// subsets returns every non-empty subset of the checks.
func subsets() [][]Check {
	all := Checks()
	var out [][]Check
	for mask := 1; mask < 1<<len(all); mask++ {
		var s []Check
		for i, c := range all {
			if mask&(1<<i) != 0 {
				s = append(s, c)
			}
		}
		out = append(out, s)
	}
	return out
}

func name(cs []Check) string {
	var s []string
	for _, c := range cs {
		s = append(s, string(c))
	}
	return strings.Join(s, ",")
}

// server is a SPEC with characters that need quoting in YAML and in a shell.
const server = `npx -y @modelcontextprotocol/server-filesystem "my dir" it's`

func render(t *testing.T, o *Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Render(&buf, o); err != nil {
		t.Fatalf("Render(%+v): %v", o, err)
	}
	return buf.Bytes()
}

// lintWorkflow runs actionlint on a workflow and returns its errors, one line each.
func lintWorkflow(t *testing.T, path string, src []byte, project *actionlint.Project) []string {
	t.Helper()
	l, err := actionlint.NewLinter(&bytes.Buffer{}, &actionlint.LinterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.Lint(path, src, project)
	if err != nil {
		t.Fatalf("actionlint: %v", err)
	}
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// TestGitHubWorkflowsPassActionlint lints the workflow of every combination of checks, with and
// without a server, with actionlint (the library behind the actionlint command).
func TestGitHubWorkflowsPassActionlint(t *testing.T) {
	for _, checks := range subsets() {
		for _, srv := range []string{"", server} {
			needs := slices.Contains(checks, CheckAudit) || slices.Contains(checks, CheckScore)
			if needs && srv == "" {
				continue
			}
			t.Run(name(checks)+"/server="+srv, func(t *testing.T) {
				src := render(t, &Options{Platform: GitHub, Checks: checks, Server: srv, Version: "v1.2.3"})
				if errs := lintWorkflow(t, "mcpspec.yml", src, nil); len(errs) > 0 {
					t.Errorf("actionlint rejects the workflow:\n%s\n\n%s", strings.Join(errs, "\n"), src)
				}
				var wf struct {
					Jobs map[string]struct {
						Steps []struct {
							Uses string `yaml:"uses"`
							Run  string `yaml:"run"`
						} `yaml:"steps"`
					} `yaml:"jobs"`
				}
				if err := yaml.Unmarshal(src, &wf); err != nil {
					t.Fatal(err)
				}
				var runs, uses []string
				for _, s := range wf.Jobs["mcpspec"].Steps {
					runs = append(runs, s.Run)
					uses = append(uses, s.Uses)
				}
				all := strings.Join(runs, "\n")
				want := map[Check]string{CheckTest: "mcpspec test collections/ --reporter junit=", CheckAudit: "mcpspec audit --server \"$MCPSPEC_SERVER\" --format sarif",
					CheckScore: "mcpspec score --server \"$MCPSPEC_SERVER\" --min-score 70", CheckLoad: "mcpspec load "}
				for _, c := range Checks() {
					if got := strings.Contains(all, want[c]); got != slices.Contains(checks, c) {
						t.Errorf("check %s: the steps contain %q = %v\n%s", c, want[c], got, all)
					}
				}
				if !strings.Contains(all, "go install github.com/mcpspec/mcpspec/cmd/mcpspec@v1.2.3") {
					t.Errorf("no install step of v1.2.3:\n%s", all)
				}
				if got := slices.Contains(uses, "github/codeql-action/upload-sarif@v3"); got != slices.Contains(checks, CheckAudit) {
					t.Errorf("upload-sarif step present = %v with checks %v", got, checks)
				}
				if !slices.Contains(uses, "actions/upload-artifact@v4") {
					t.Errorf("no artefact upload: %v", uses)
				}
			})
		}
	}
}

// TestActionlintCatchesABrokenWorkflow shows the lint above can fail: a misspelt expression
// and an unknown input of a popular action are errors.
func TestActionlintCatchesABrokenWorkflow(t *testing.T) {
	src := render(t, &Options{Platform: GitHub, Checks: Checks(), Server: server})
	broken := bytes.Replace(src, []byte("!cancelled()"), []byte("!canceled()"), 1)
	broken = bytes.Replace(broken, []byte("if-no-files-found:"), []byte("if-no-file-found:"), 1)
	errs := lintWorkflow(t, "mcpspec.yml", broken, nil)
	if len(errs) < 2 {
		t.Fatalf("actionlint found %d errors in a broken workflow, want 2 or more: %v", len(errs), errs)
	}
}

// TestGitLabPipelineHasTheJobs parses the GitLab pipeline and checks its jobs and reports.
func TestGitLabPipelineHasTheJobs(t *testing.T) {
	for _, checks := range subsets() {
		t.Run(name(checks), func(t *testing.T) {
			src := render(t, &Options{Platform: GitLab, Checks: checks, Server: server})
			type job struct {
				Extends      string   `yaml:"extends"`
				Stage        string   `yaml:"stage"`
				Image        string   `yaml:"image"`
				Timeout      string   `yaml:"timeout"`
				BeforeScript []string `yaml:"before_script"`
				Script       []string `yaml:"script"`
				Variables    map[string]string
				Artifacts    struct {
					When     string   `yaml:"when"`
					ExpireIn string   `yaml:"expire_in"`
					Paths    []string `yaml:"paths"`
					Reports  struct {
						JUnit string `yaml:"junit"`
					} `yaml:"reports"`
				} `yaml:"artifacts"`
			}
			var jobs map[string]job
			dec := yaml.NewDecoder(bytes.NewReader(src))
			dec.KnownFields(true)
			if err := dec.Decode(&jobs); err != nil {
				t.Fatalf("%v\n%s", err, src)
			}
			base, ok := jobs[".mcpspec"]
			if !ok || base.Image != "golang:1.26" || len(base.BeforeScript) == 0 ||
				base.BeforeScript[0] != "go install github.com/mcpspec/mcpspec/cmd/mcpspec@latest" || base.Variables["MCPSPEC_SERVER"] != server {
				t.Errorf("the hidden .mcpspec job = %+v", base)
			}
			for _, c := range Checks() {
				j, ok := jobs["mcpspec-"+string(c)]
				if ok != slices.Contains(checks, c) {
					t.Errorf("job mcpspec-%s present = %v with checks %v", c, ok, checks)
					continue
				}
				if !ok {
					continue
				}
				if j.Extends != ".mcpspec" || len(j.Script) != 1 || !strings.HasPrefix(j.Script[0], "mcpspec "+string(c)+" ") {
					t.Errorf("job mcpspec-%s = %+v", c, j)
				}
				if c == CheckTest && (j.Artifacts.Reports.JUnit != "mcpspec-report/junit.xml" || j.Artifacts.When != "always") {
					t.Errorf("the test job publishes %+v", j.Artifacts)
				}
			}
		})
	}
}

// TestShellScriptParses checks the shell script of every combination with bash -n (and
// shellcheck when it is installed), and runs one whose mcpspec and go are stubs.
func TestShellScriptParses(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	shellcheck, _ := exec.LookPath("shellcheck")
	dir := t.TempDir()
	for _, checks := range subsets() {
		src := render(t, &Options{Platform: Shell, Checks: checks, Server: server})
		path := filepath.Join(dir, "ci.sh")
		if err := os.WriteFile(path, src, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(bash, "-n", path).CombinedOutput(); err != nil {
			t.Errorf("%s: bash -n: %v\n%s\n%s", name(checks), err, out, src)
		}
		if shellcheck != "" {
			if out, err := exec.Command(shellcheck, path).CombinedOutput(); err != nil {
				t.Errorf("%s: shellcheck: %v\n%s", name(checks), err, out)
			}
		}
	}
}

// TestShellScriptRuns runs the script with stub go and mcpspec commands that record their
// arguments: the server SPEC arrives as one argument, unchanged, and a failing check fails the
// script after the other checks ran.
func TestShellScriptRuns(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	repo := t.TempDir()
	bin := filepath.Join(repo, "bin")
	for _, d := range []string{"ci", "bin", "gopath/bin"} {
		if err := os.MkdirAll(filepath.Join(repo, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	log := filepath.Join(repo, "calls.log")
	stub := "#!/bin/sh\nfor a in \"$@\"; do printf '[%s]' \"$a\" >> " + log + "; done; echo >> " + log + "\n"
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte("#!/bin/sh\nif [ \"$1\" = env ]; then echo "+filepath.Join(repo, "gopath")+"; exit 0; fi\n"+stub[len("#!/bin/sh\n"):]), 0o755); err != nil {
		t.Fatal(err)
	}
	// mcpspec score fails (exit 1); the load check still runs, and the script exits 1.
	if err := os.WriteFile(filepath.Join(repo, "gopath/bin/mcpspec"), []byte(stub+"[ \"$1\" != score ]\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := render(t, &Options{Platform: Shell, Checks: Checks(), Server: server, Version: "v1.2.3"})
	if err := os.WriteFile(filepath.Join(repo, "ci", "mcpspec.sh"), src, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bash, filepath.Join(repo, "ci", "mcpspec.sh"))
	cmd.Env = append(os.Environ(), "PATH="+bin+":/usr/bin:/bin")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("script: %v, want exit 1\n%s", err, out)
	}
	got, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	q := "[" + server + "]"
	want := "[install][github.com/mcpspec/mcpspec/cmd/mcpspec@v1.2.3]\n" +
		"[test][collections/][--reporter][junit=mcpspec-report/junit.xml][--reporter][html=mcpspec-report/report.html]\n" +
		"[audit][--server]" + q + "[--format][sarif][--output][mcpspec-report/audit.sarif][--fail-on][high]\n" +
		"[score][--server]" + q + "[--min-score][70][--badge][mcpspec-report/score.svg]\n" +
		"[load][--server]" + q + "[--collection][collections/][--rate][10/s][--duration][10s][--out][mcpspec-report/runs][--progress][plain]\n"
	if string(got) != want {
		t.Errorf("calls:\n%s\nwant:\n%s\noutput:\n%s", got, want, out)
	}
}

// TestGolden keeps one pipeline per platform, every check on, as a file a reviewer reads.
func TestGolden(t *testing.T) {
	for _, p := range Platforms() {
		src := render(t, &Options{Platform: p, Checks: Checks(), Server: "testserver", Version: "v1.2.3", MinScore: 80})
		golden.Check(t, filepath.Join("testdata", "golden", string(p)+filepath.Ext(Path(p))), src)
	}
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		fs   fstest.MapFS
		want Platform
	}{
		{fstest.MapFS{".github/workflows/go.yml": {}}, GitHub},
		{fstest.MapFS{".github": {Mode: os.ModeDir}}, GitHub},
		{fstest.MapFS{".gitlab-ci.yml": {}}, GitLab},
		{fstest.MapFS{".github": {}, ".gitlab-ci.yml": {}}, GitLab}, // a file named .github is not the directory
		{fstest.MapFS{"go.mod": {}}, Shell},
		{fstest.MapFS{}, Shell},
	} {
		if got := Detect(tc.fs); got != tc.want {
			t.Errorf("Detect(%v) = %s, want %s", tc.fs, got, tc.want)
		}
	}
}

func TestBadOptions(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Platform: GitHub, Checks: []Check{CheckAudit}}, ErrNoServer.Error()},
		{Options{Platform: GitHub, Checks: []Check{CheckScore}}, ErrNoServer.Error()},
		{Options{Platform: "jenkins"}, `unknown platform "jenkins"`},
		{Options{Platform: GitHub, Checks: []Check{"lint"}}, `unknown check "lint"`},
		{Options{Platform: GitHub, Version: "main; rm -rf /"}, `is not a module version`},
		{Options{Platform: GitHub, Server: "a\nb", Checks: []Check{CheckAudit}}, `one line`},
		{Options{Platform: GitHub, Collections: "--help"}, `not a flag`},
		{Options{Platform: GitHub, Server: "x", Checks: []Check{CheckScore}, MinScore: 101}, `not within 0–100`},
	} {
		err := Render(&bytes.Buffer{}, &tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Render(%+v) = %v, want an error containing %q", tc.o, err, tc.want)
		}
	}
	if _, err := ParseChecks("test,,load,test"); err != nil {
		t.Errorf("ParseChecks: %v", err)
	}
	for _, s := range []string{"", "test,bench", ","} {
		if _, err := ParseChecks(s); err == nil {
			t.Errorf("ParseChecks(%q) accepted", s)
		}
	}
	if _, err := ParsePlatform("circleci"); err == nil {
		t.Error("ParsePlatform(circleci) accepted")
	}
}
