package ciconfig

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"gopkg.in/yaml.v3"
)

// The composite action at the repository root (action.yml) is checked three ways, because
// actionlint lints workflows, not action metadata: (1) a workflow that uses it (uses: ./) in a
// project whose root holds it, so actionlint reads its metadata (inputs, runs.using, steps
// present); (2) its steps, moved into a reusable workflow whose workflow_call inputs are the
// action's inputs, so actionlint checks every ${{ }} expression (contexts, inputs, step ids,
// functions) and the popular actions' inputs; (3) a strict decode of the file and bash -n on
// every run script, which must take inputs through env, never as ${{ }} text in the script.

// actionMeta is action.yml, decoded strictly.
type actionMeta struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Author      string `yaml:"author"`
	Branding    struct {
		Icon  string `yaml:"icon"`
		Color string `yaml:"color"`
	} `yaml:"branding"`
	Inputs map[string]struct {
		Description string `yaml:"description"`
		Default     string `yaml:"default"`
		Required    bool   `yaml:"required"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Description string `yaml:"description"`
		Value       string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string      `yaml:"using"`
		Steps []yaml.Node `yaml:"steps"`
	} `yaml:"runs"`
}

// actionStep is one step of the composite action, decoded strictly.
type actionStep struct {
	Name             string            `yaml:"name"`
	ID               string            `yaml:"id"`
	If               string            `yaml:"if"`
	Uses             string            `yaml:"uses"`
	With             map[string]string `yaml:"with"`
	Shell            string            `yaml:"shell"`
	WorkingDirectory string            `yaml:"working-directory"`
	Env              map[string]string `yaml:"env"`
	Run              string            `yaml:"run"`
}

func readAction(t *testing.T) ([]byte, *actionMeta, []actionStep) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var meta actionMeta
	dec := yaml.NewDecoder(bytes.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(&meta); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	var steps []actionStep
	for _, n := range meta.Runs.Steps {
		var buf bytes.Buffer
		if err := yaml.NewEncoder(&buf).Encode(&n); err != nil {
			t.Fatal(err)
		}
		var s actionStep
		d := yaml.NewDecoder(&buf)
		d.KnownFields(true)
		if err := d.Decode(&s); err != nil {
			t.Fatalf("action.yml: step at line %d: %v", n.Line, err)
		}
		steps = append(steps, s)
	}
	return src, &meta, steps
}

// project makes a git-like project root holding action.yml and .github/workflows, which is what
// actionlint needs to resolve uses: ./ to the action's metadata.
func project(t *testing.T, action []byte) (string, *actionlint.Project) {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{".git", ".github/workflows"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "action.yml"), action, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := actionlint.NewProject(root)
	if err != nil {
		t.Fatal(err)
	}
	return root, p
}

func lintIn(t *testing.T, root string, p *actionlint.Project, name string, wf []byte) []string {
	t.Helper()
	opts := &actionlint.LinterOptions{}
	if sc, err := exec.LookPath("shellcheck"); err == nil {
		opts.Shellcheck = sc
	}
	l, err := actionlint.NewLinter(&bytes.Buffer{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, ".github", "workflows", name)
	if err := os.WriteFile(path, wf, 0o644); err != nil {
		t.Fatal(err)
	}
	errs, err := l.Lint(path, wf, p)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

const usesAction = `name: use
on:
  pull_request:
  push:
permissions:
  contents: read
  security-events: write
jobs:
  mcpspec:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v5
      - id: mcpspec
        uses: ./
        with:
          collections: collections/ more/smoke.yaml
          server: npx -y @modelcontextprotocol/server-filesystem .
          checks: test,audit,score,load
          %s: "80"
      - run: echo "${{ steps.mcpspec.outputs.report-dir }}"
`

// TestActionUsedByAWorkflow lints a workflow that uses the action: its inputs are known to
// actionlint from action.yml, and a misspelt input is an error.
func TestActionUsedByAWorkflow(t *testing.T) {
	src, _, _ := readAction(t)
	root, p := project(t, src)
	if errs := lintIn(t, root, p, "use.yml", []byte(strings.Replace(usesAction, "%s", "min-score", 1))); len(errs) > 0 {
		t.Errorf("actionlint rejects a workflow using the action:\n%s", strings.Join(errs, "\n"))
	}
	errs := lintIn(t, root, p, "typo.yml", []byte(strings.Replace(usesAction, "%s", "minimum-score", 1)))
	if !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, `input "minimum-score" is not defined`) }) {
		t.Errorf("actionlint did not read the action's inputs: a misspelt input gave %q", errs)
	}
}

// TestActionStepsAsAWorkflow lints the action's steps as the job of a reusable workflow whose
// inputs are the action's, so every expression and step is checked.
func TestActionStepsAsAWorkflow(t *testing.T) {
	src, meta, _ := readAction(t)
	wf := map[string]any{
		"name": "action-steps",
		"on": map[string]any{"workflow_call": map[string]any{"inputs": func() map[string]any {
			in := map[string]any{}
			for name, i := range meta.Inputs {
				in[name] = map[string]any{"type": "string", "default": i.Default, "required": i.Required}
			}
			return in
		}()}},
		"jobs": map[string]any{"action": map[string]any{"runs-on": "ubuntu-latest", "steps": meta.Runs.Steps}},
	}
	out, err := yaml.Marshal(wf)
	if err != nil {
		t.Fatal(err)
	}
	root, p := project(t, src)
	if errs := lintIn(t, root, p, "steps.yml", out); len(errs) > 0 {
		t.Errorf("actionlint rejects the action's steps:\n%s\n\n%s", strings.Join(errs, "\n"), out)
	}
	// The same check fails on a step that refers to an input the action does not declare.
	broken := bytes.Replace(out, []byte("inputs.min-score"), []byte("inputs.min_score"), 1)
	if errs := lintIn(t, root, p, "broken.yml", broken); len(errs) == 0 {
		t.Error("actionlint accepted a step using an undeclared input")
	}
}

var expr = regexp.MustCompile(`\$\{\{.*?\}\}`)

// TestActionMetadataAndScripts decodes action.yml strictly and checks each run script with
// bash -n; scripts take inputs through env only (no script injection through an input).
func TestActionMetadataAndScripts(t *testing.T) {
	_, meta, steps := readAction(t)
	if meta.Runs.Using != "composite" || meta.Name == "" || meta.Description == "" {
		t.Errorf("runs.using %q, name %q, description %q", meta.Runs.Using, meta.Name, meta.Description)
	}
	for _, want := range []string{"collections", "server", "checks", "baseline-branch", "go-version"} {
		if _, ok := meta.Inputs[want]; !ok {
			t.Errorf("no input %q", want)
		}
	}
	var all []string
	for _, s := range steps {
		all = append(all, s.Run, s.Uses)
		if s.Run == "" {
			continue
		}
		if s.Shell != "bash" {
			t.Errorf("step %q: a run step of a composite action needs shell: bash, has %q", s.Name, s.Shell)
		}
		if m := expr.FindString(s.Run); m != "" {
			t.Errorf("step %q: %s in the script; pass it through env", s.Name, m)
		}
		cmd := exec.Command("bash", "-n")
		cmd.Stdin = strings.NewReader(s.Run)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("step %q: bash -n: %v\n%s", s.Name, err, out)
		}
	}
	text := strings.Join(all, "\n")
	for _, want := range []string{"go install ./cmd/mcpspec", "mcpspec compare --baseline", "GITHUB_STEP_SUMMARY",
		"--reporter \"markdown=", "github/codeql-action/upload-sarif@v3"} {
		if !strings.Contains(text, want) {
			t.Errorf("the action has no %q", want)
		}
	}
}
