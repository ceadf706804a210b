package ciconfig

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestActionTestStepRuns runs the action's "Run the collections" script with a real mcpspec
// against the reference server, as GitHub would: a push saves the branch's baseline, then a pull
// request to that branch is compared with it and the summary holds the run and the comparison.
func TestActionTestStepRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcpspec")
	}
	_, meta, steps := readAction(t)
	var script string
	var env map[string]string
	for _, s := range steps {
		if s.ID == "test" {
			script, env = s.Run, s.Env
		}
	}
	if script == "" {
		t.Fatal("no step with id test")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "mcpspec"), "../../cmd/mcpspec")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	work := filepath.Join(dir, "repo")
	if err := os.MkdirAll(filepath.Join(work, "collections"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"quickstart.yaml", "quickstart.env"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, "collections", f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// ${{ inputs.X || github.Y }} and ${{ inputs.X }} as GitHub evaluates them.
	ref := regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)
	run := func(event, base string) (summary, output string) {
		t.Helper()
		sum, out := filepath.Join(dir, event+".summary"), filepath.Join(dir, event+".output")
		vars := []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "HOME=" + dir, "GITHUB_STEP_SUMMARY=" + sum,
			"GITHUB_OUTPUT=" + out, "GITHUB_EVENT_NAME=" + event, "GITHUB_REF_NAME=release/1"}
		for k, v := range env {
			v = ref.ReplaceAllStringFunc(v, func(m string) string {
				e := ref.FindStringSubmatch(m)[1]
				if strings.HasPrefix(e, "inputs.baseline-branch") {
					return base
				}
				return meta.Inputs[strings.TrimPrefix(e, "inputs.")].Default
			})
			vars = append(vars, k+"="+v)
		}
		cmd := exec.Command("bash", "-e", "-c", script)
		cmd.Dir, cmd.Env = work, vars
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", event, err, b)
		}
		s, _ := os.ReadFile(sum)
		o, _ := os.ReadFile(out)
		return string(s), string(o)
	}
	summary, output := run("push", "")
	if !strings.Contains(summary, "PASS") || output != "save=true\n" {
		t.Fatalf("push: summary %q, output %q", summary, output)
	}
	if _, err := os.Stat(filepath.Join(work, ".mcpspec", "baselines", "release-1.json")); err != nil {
		t.Fatalf("push: no baseline saved: %v", err)
	}
	summary, output = run("pull_request", "release/1")
	for _, want := range []string{"mcpspec run", "### Compared with the baseline of `release/1`"} {
		if !strings.Contains(summary, want) {
			t.Errorf("pull request: the summary has no %q:\n%s", want, summary)
		}
	}
	if output != "" {
		t.Errorf("a pull request saved a baseline: %q", output)
	}
	summary, _ = run("pull_request", "develop")
	if !strings.Contains(summary, "No baseline of `develop` yet") {
		t.Errorf("pull request to a branch without a baseline:\n%s", summary)
	}
	for _, f := range []string{"junit.xml", "report.html", "summary.md", "results.json", "compare.md"} {
		if _, err := os.Stat(filepath.Join(work, "mcpspec-report", f)); err != nil {
			t.Errorf("report %s: %v", f, err)
		}
	}
}
