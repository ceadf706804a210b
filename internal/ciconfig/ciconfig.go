package ciconfig

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"text/template"
)

// Platform is a CI system a pipeline is written for.
type Platform string

// The platforms [Render] writes for.
const (
	GitHub Platform = "github"
	GitLab Platform = "gitlab"
	Shell  Platform = "shell"
)

// Platforms lists every [Platform], in the order help text shows them.
func Platforms() []Platform { return []Platform{GitHub, GitLab, Shell} }

// Check is one thing a pipeline does with mcpspec.
type Check string

// The checks a pipeline can run.
const (
	// CheckTest runs the collections (mcpspec test) with the JUnit and HTML reporters.
	CheckTest Check = "test"
	// CheckAudit runs the passive security audit (mcpspec audit) and uploads its SARIF.
	CheckAudit Check = "audit"
	// CheckScore gates on the server's score (mcpspec score --min-score).
	CheckScore Check = "score"
	// CheckLoad runs a short load test of the collections' tests (mcpspec load --collection).
	CheckLoad Check = "load"
)

// Checks lists every [Check], in the order a pipeline runs them.
func Checks() []Check { return []Check{CheckTest, CheckAudit, CheckScore, CheckLoad} }

// ErrNoServer is returned by [Render] when a check that needs a server SPEC (audit, score) is
// asked for without [Options.Server].
var ErrNoServer = errors.New("the audit and score checks need a server SPEC")

// DefaultMinScore is the score gate of [CheckScore] when [Options.MinScore] is 0.
const DefaultMinScore = 70

// ReportDir is the directory, relative to the repository, where a pipeline writes its reports
// (junit.xml, report.html, audit.sarif, score.svg, runs/).
const ReportDir = "mcpspec-report"

// Options is what a pipeline is made of.
type Options struct {
	// Platform is the CI system (required).
	Platform Platform
	// Checks are the checks to run (nil = test only), in any order; a pipeline runs them in the
	// order of [Checks].
	Checks []Check
	// Collections is the collection file or directory, relative to the repository root
	// ("" = "collections/").
	Collections string
	// Server is the SPEC of the server that audit, score and load test ("" = load uses the
	// collections' own servers; audit and score need it).
	Server string
	// Version is the mcpspec version to install: a module version ("v1.2.3", a pseudo-version)
	// or "latest" ("" = "latest").
	Version string
	// MinScore is the score below which the score check fails (0 = [DefaultMinScore]).
	MinScore int
	// GoVersion is the Go toolchain the pipeline installs mcpspec with ("" = "1.26.x" on
	// GitHub, the golang:1.26 image on GitLab; the shell script uses the go on PATH).
	GoVersion string
}

// Path returns where the pipeline of p belongs, relative to the repository root. The GitLab
// pipeline is a file to include from .gitlab-ci.yml, so an existing pipeline is never replaced.
func Path(p Platform) string {
	switch p {
	case GitHub:
		return ".github/workflows/mcpspec.yml"
	case GitLab:
		return ".gitlab/mcpspec.gitlab-ci.yml"
	default:
		return "ci/mcpspec.sh"
	}
}

// Detect guesses the platform of the repository fsys: a .github directory means GitHub, a
// .gitlab-ci.yml file GitLab, anything else Shell.
func Detect(fsys fs.FS) Platform {
	if fi, err := fs.Stat(fsys, ".github"); err == nil && fi.IsDir() {
		return GitHub
	}
	if fi, err := fs.Stat(fsys, ".gitlab-ci.yml"); err == nil && fi.Mode().IsRegular() {
		return GitLab
	}
	return Shell
}

// ParsePlatform returns the [Platform] named s.
func ParsePlatform(s string) (Platform, error) {
	for _, p := range Platforms() {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown platform %q (want github, gitlab or shell)", s)
}

// ParseChecks parses a comma-separated list of checks ("test,audit").
func ParseChecks(s string) ([]Check, error) {
	var out []Check
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !slices.Contains(Checks(), Check(f)) {
			return nil, fmt.Errorf("unknown check %q (want test, audit, score or load)", f)
		}
		if !slices.Contains(out, Check(f)) {
			out = append(out, Check(f))
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no check given (want test, audit, score or load)")
	}
	return out, nil
}

//go:embed templates/*.tmpl
var templates embed.FS

// data is what the templates see: every command is complete shell text, its values quoted.
type data struct {
	Checks     map[string]bool
	Server     string
	GoVersion  string
	GoImage    string
	ReportDir  string
	Install    string
	Test       string
	Audit      string
	Score      string
	Load       string
	Version    string
	SARIF      string
	HasSARIF   bool
	ServerVar  string
	Collection string
}

// Render writes the pipeline of o to w.
func Render(w io.Writer, o *Options) error {
	d, err := prepare(o)
	if err != nil {
		return err
	}
	name := map[Platform]string{GitHub: "github.yml.tmpl", GitLab: "gitlab.yml.tmpl", Shell: "shell.sh.tmpl"}[o.Platform]
	if name == "" {
		return fmt.Errorf("unknown platform %q (want github, gitlab or shell)", o.Platform)
	}
	t, err := template.New(name).Option("missingkey=error").Funcs(template.FuncMap{
		"yaml": yamlString, "sh": shellQuote,
	}).ParseFS(templates, "templates/"+name)
	if err != nil {
		return fmt.Errorf("ciconfig: parse template %s: %w", name, err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, d); err != nil {
		return fmt.Errorf("ciconfig: render %s: %w", name, err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

func prepare(o *Options) (*data, error) {
	checks := o.Checks
	if len(checks) == 0 {
		checks = []Check{CheckTest}
	}
	d := &data{Checks: map[string]bool{}, ReportDir: ReportDir, Server: o.Server, ServerVar: `"$MCPSPEC_SERVER"`}
	for _, c := range Checks() {
		d.Checks[string(c)] = false
	}
	for _, c := range checks {
		if !slices.Contains(Checks(), c) {
			return nil, fmt.Errorf("unknown check %q (want test, audit, score or load)", c)
		}
		d.Checks[string(c)] = true
	}
	if (d.Checks[string(CheckAudit)] || d.Checks[string(CheckScore)]) && o.Server == "" {
		return nil, ErrNoServer
	}
	if strings.ContainsAny(o.Server, "\n\r\x00") {
		return nil, errors.New("the server SPEC is one line")
	}
	d.Version = o.Version
	if d.Version == "" {
		d.Version = "latest"
	}
	if !validVersion(d.Version) {
		return nil, fmt.Errorf("mcpspec version %q is not a module version (v1.2.3) or latest", d.Version)
	}
	d.GoVersion = o.GoVersion
	if d.GoVersion == "" {
		d.GoVersion = "1.26.x"
	}
	d.GoImage = "golang:" + strings.TrimSuffix(d.GoVersion, ".x")
	cols := o.Collections
	if cols == "" {
		cols = "collections/"
	}
	if strings.ContainsAny(cols, "\n\r\x00") || strings.HasPrefix(cols, "-") {
		return nil, fmt.Errorf("collections path %q: a path, not a flag, on one line", cols)
	}
	d.Collection = cols
	d.Install = "go install github.com/mcpspec/mcpspec/cmd/mcpspec@" + d.Version
	d.Test = fmt.Sprintf("mcpspec test %s --reporter junit=%s/junit.xml --reporter html=%s/report.html",
		shellQuote(cols), ReportDir, ReportDir)
	d.SARIF = ReportDir + "/audit.sarif"
	d.HasSARIF = d.Checks[string(CheckAudit)]
	d.Audit = fmt.Sprintf("mcpspec audit --server %s --format sarif --output %s --fail-on high", d.ServerVar, d.SARIF)
	minScore := o.MinScore
	if minScore == 0 {
		minScore = DefaultMinScore
	}
	if minScore < 0 || minScore > 100 {
		return nil, fmt.Errorf("minimum score %d is not within 0–100", minScore)
	}
	d.Score = fmt.Sprintf("mcpspec score --server %s --min-score %d --badge %s/score.svg", d.ServerVar, minScore, ReportDir)
	d.Load = fmt.Sprintf("mcpspec load --collection %s --rate 10/s --duration 10s --out %s/runs --progress plain", shellQuote(cols), ReportDir)
	if o.Server != "" {
		d.Load = fmt.Sprintf("mcpspec load --server %s --collection %s --rate 10/s --duration 10s --out %s/runs --progress plain",
			d.ServerVar, shellQuote(cols), ReportDir)
	}
	return d, nil
}

// validVersion reports whether v can follow the @ of go install: "latest" or a semantic
// version's characters.
func validVersion(v string) bool {
	if v == "latest" {
		return true
	}
	if !strings.HasPrefix(v, "v") || len(v) < 2 {
		return false
	}
	for _, r := range v[1:] {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || strings.ContainsRune(".-+", r)) {
			return false
		}
	}
	return true
}

// yamlString quotes s as a YAML double-quoted scalar (JSON's string syntax is one).
func yamlString(s string) string { return strconv.Quote(s) }

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:@%+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
