package cli

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/redact"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/reporters"
	"github.com/mcpspec/mcpspec/result"
)

// leakMarkers are in every nasty secret, around its nasty part: finding one in an output means
// some piece of the secret got out, in whatever encoding.
var leakMarkers = []string{"QZJ1", "QZJ2"}

// nastySecrets are passwords full of what escaping changes.
var nastySecrets = map[string]string{
	"quote and backslash": `QZJ1p@ss"w\ordQZJ2`,
	"tab":                 "QZJ1pass\twordQZJ2",
	"newline":             "QZJ1pass\nwordQZJ2",
	"html":                "QZJ1<b>&amp;</b>'QZJ2",
	"percent and plus":    "QZJ1100%+a b/c?d=e&f#QZJ2",
	"non-ASCII":           "QZJ1mot de passe: héhé, пароль, 密码QZJ2",
	"emoji":               "QZJ1🔑🗝️QZJ2",
	"everything":          "QZJ1\"\\\t\n<&>%é🔑'+]]>QZJ2",
}

// secretsCollection uses PW everywhere a secret can end up in a report: a failed equals
// (actual and message), an extracted value, a server's error message, a second answer quoted in
// a finding, a URL query parameter of a server that answers and of one that refuses the
// connection.
const secretsCollection = `name: Secrets
servers:
  local: testserver
  dup: testserver --duplicate-answers
  web: {url: "WEB/mcp?access_token={{secret.PW}}", timeouts: {connect: 5s}}
  gone: {url: "http://127.0.0.1:1/mcp?api_key={{secret.PW}}", timeouts: {connect: 2s}}
tests:
  - name: Echo fails an equals
    server: local
    call: echo
    with: {text: "{{secret.PW}}"}
    expect:
      - equals: {path: "$.content[0].text", value: "not it"}
  - id: extract
    name: Echo passes and extracts
    server: local
    call: echo
    with: {text: "{{secret.PW}}"}
    extract:
      - {name: sessionToken, path: "$.content[0].text"}
  - name: Error carries it
    server: local
    call: error
    with: {message: "bad {{secret.PW}}"}
  - name: Over HTTP with the secret in the query
    server: web
    call: echo
    with: {text: "{{secret.PW}} and more"}
    expect:
      - contains: nope
  - name: Answered twice, the second answer a finding
    server: dup
    call: echo
    with: {text: "{{secret.PW}}"}
  - name: Refused with the secret in the query
    server: gone
    call: echo
    with: {text: a}
`

// TestSecretsNeverReachOutputs runs a real collection against the built-in server with each
// nasty secret, through every reporter (to files and streamed to stdout), and checks that no
// piece of the secret is in any report, on stdout or stderr, in latest.json or in the saved
// baseline.
func TestSecretsNeverReachOutputs(t *testing.T) {
	t.Parallel()
	exe, err := exec.LookPath("mcpspec")
	if err != nil {
		t.Fatalf("mcpspec not installed by TestMain: %v", err)
	}
	web := mcptest.NewServer(nil)
	defer web.Close()
	for name, secret := range nastySecrets {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			col := strings.ReplaceAll(secretsCollection, "WEB", web.URL)
			if err := os.WriteFile(filepath.Join(dir, "secrets.yaml"), []byte(col), 0o644); err != nil {
				t.Fatal(err)
			}
			outputs := map[string]string{}
			run := func(label string, args ...string) {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				cmd := exec.CommandContext(ctx, exe, args...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "PW="+secret, "NO_COLOR=1")
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				cmd.WaitDelay = 5 * time.Second
				err := cmd.Run()
				var ee *exec.ExitError
				if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == int(ExitFailure)) {
					t.Fatalf("%s: mcpspec %s: %v\nstdout:\n%s\nstderr:\n%s", label, strings.Join(args, " "), err, stdout.String(), stderr.String())
				}
				outputs[label+" stdout"] = stdout.String()
				outputs[label+" stderr"] = stderr.String()
			}
			run("files", "test", "secrets.yaml", "-r", "json=out/r.json", "-r", "junit=out/j.xml", "-r", "tap=out/t.tap",
				"-r", "html=out/r.html", "-r", "markdown=out/r.md", "-r", "console=out/c.txt", "--save-baseline=b")
			run("tap", "test", "secrets.yaml", "-r", "tap", "--baseline", "b")
			run("json", "test", "secrets.yaml", "-r", "json", "--json-errors")
			run("baseline save", "baseline", "save", "again")
			err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() || strings.HasSuffix(p, ".stderr.log") || strings.HasSuffix(p, ".yaml") {
					return err // the server's own stderr is its business; the collection holds only {{secret.PW}}
				}
				b, err := os.ReadFile(p)
				outputs[strings.TrimPrefix(p, dir+"/")] = string(b)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"out/r.json", "out/j.xml", "out/t.tap", "out/r.html", "out/r.md", "out/c.txt",
				".mcpspec/runs/latest.json", ".mcpspec/baselines/b.json", ".mcpspec/baselines/again.json"} {
				if _, ok := outputs[want]; !ok {
					t.Errorf("no %s was written", want)
				}
			}
			forms := redact.Forms(secret)
			for file, text := range outputs {
				for _, m := range leakMarkers {
					if i := strings.Index(text, m); i >= 0 {
						t.Errorf("%s leaks the secret: …%s…", file, text[max(0, i-60):min(len(text), i+60)])
						break
					}
				}
				for _, f := range forms {
					if strings.Contains(text, f) {
						t.Errorf("%s holds the secret as %q", file, f)
					}
				}
			}
			if !strings.Contains(outputs["out/r.json"], `"findings": 1`) {
				t.Errorf("the second answer is not reported:\n%s", outputs["out/r.json"])
			}
			if !strings.Contains(outputs["out/r.json"], `"actual": "\"***\""`) {
				t.Errorf("the failed equals does not show the masked actual value:\n%s", outputs["out/r.json"])
			}
		})
	}
}

// TestReportsMaskTheirBytes gives every reporter a result that still holds a secret, raw and
// escaped (as if the runner had missed a field): the bytes each writes, to a file or to stdout,
// are masked all the same.
func TestReportsMaskTheirBytes(t *testing.T) {
	dir := t.TempDir()
	for name, secret := range nastySecrets {
		var stdout, stderr bytes.Buffer
		a := newApp(&IO{Stdout: &stdout, Stderr: &stderr})
		a.masker.Add(secret)
		var specs []reporterSpec
		for _, r := range reporters.Names() {
			spec, err := parseReporters([]string{r + "=" + filepath.Join(dir, r+reporters.Extension(r))})
			if err != nil {
				t.Fatal(err)
			}
			specs = append(specs, spec[0])
		}
		specs = append(specs, consoleSpec())
		reps, err := a.openReporters(specs)
		if err != nil {
			t.Fatal(err)
		}
		run := leakyRun(secret)
		for _, r := range reps {
			if s, ok := r.rep.(reporters.Streamer); ok {
				for _, tt := range run.Collections[0].Tests {
					s.Event(result.Event{Kind: result.TestFinished, Run: run, Collection: run.Collections[0], Test: tt})
				}
			}
		}
		if errs := writeReports(reps, run); len(errs) > 0 {
			t.Fatal(errs)
		}
		a.flush()
		outputs := map[string]string{"stdout": stdout.String(), "stderr": stderr.String()}
		for _, r := range reporters.Names() {
			b, err := os.ReadFile(filepath.Join(dir, r+reporters.Extension(r)))
			if err != nil {
				t.Fatal(err)
			}
			outputs[r] = string(b)
		}
		for out, text := range outputs {
			for _, m := range leakMarkers {
				if i := strings.Index(text, m); i >= 0 {
					t.Errorf("%s: the %s output leaks the secret: …%s…", name, out, text[max(0, i-60):min(len(text), i+60)])
					break
				}
			}
		}
	}
}

// leakyRun is a failed run whose result fields hold secret unmasked, raw and quoted.
func leakyRun(secret string) *result.Run {
	quoted := strconv.Quote(secret)
	t := &result.Test{ID: "t", Name: "leaky " + secret, Kind: "tool", Target: "tool echo " + secret, Status: result.Failed,
		Failures: []result.Failure{{Assertion: "equals", Path: "$.content[0].text", Expected: `"x"`, Actual: quoted,
			Message: "expected \"x\", got " + quoted}},
		Request: `tools/call {"text":` + quoted + `}`, Response: `{"content":[{"text":` + quoted + `}]}`,
		Stderr: "stderr says " + secret, Extracted: map[string]string{"token": secret}}
	t.Attempts = []result.Attempt{{Status: result.Failed, Failures: t.Failures}}
	ok := &result.Test{ID: "e", Name: "errored", Kind: "tool", Status: result.Errored,
		Error: &result.Error{Category: "ServerError", Message: "bad " + secret, Hint: "hint " + quoted}}
	ok.Attempts = []result.Attempt{{Status: result.Errored, Error: ok.Error}}
	return &result.Run{SchemaVersion: result.SchemaVersion, ID: "r", Collections: []*result.Collection{{
		Name: "Secrets " + secret, File: "secrets.yaml", Tests: []*result.Test{t, ok},
		Servers: []result.Server{{Name: "s", Transport: "http", Target: "http://h/mcp?token=" + url.QueryEscape(secret)}},
	}}}
}
