package reporters

// Real consumers read our output here: xmllint against the JUnit XSD, Perl's TAP::Parser and
// prove, and headless Chromium. Each test skips when its tool is missing, unless
// MCPSPEC_CONSUMERS=1 (CI sets it) — then a missing tool is a failure.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jstemmer/go-junit-report/v2/gtr"
	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/mcpspec/mcpspec/result"
)

// consumer finds a tool on PATH or skips (fails under MCPSPEC_CONSUMERS=1).
func consumer(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("MCPSPEC_CONSUMERS") == "1" {
			t.Fatalf("%s is required when MCPSPEC_CONSUMERS=1: %v", name, err)
		}
		t.Skipf("%s not installed; set MCPSPEC_CONSUMERS=1 to require it", name)
	}
	return p
}

// runTool runs a consumer with a deadline and returns its combined output and exit error.
func runTool(t *testing.T, timeout time.Duration, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s timed out after %v:\n%s", name, timeout, out)
	}
	return string(out), err
}

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func emptyRun() *result.Run {
	return &result.Run{SchemaVersion: result.SchemaVersion, ID: "empty", StartedAt: t0}
}

var xsdPath = filepath.Join("..", "testdata", "junit", "junit.xsd")

func TestJUnitValidatesWithXmllint(t *testing.T) {
	xmllint := consumer(t, "xmllint")
	runs := map[string]*result.Run{"sample": sampleRun(), "interrupted": interruptedRun(), "empty": emptyRun(), "findings": findingsRun()}
	for name, run := range runs {
		t.Run(name, func(t *testing.T) {
			out := render(t, "junit", nil, run, false)
			p := writeTemp(t, name+".xml", out)
			if msg, err := runTool(t, 30*time.Second, xmllint, "--noout", "--schema", xsdPath, p); err != nil {
				t.Fatalf("xmllint rejected the junit report: %v\n%s", err, msg)
			}
		})
	}
	// The XSD accepts what go-junit-report itself writes (pass, fail, skip, unknown, build error).
	t.Run("go-junit-report-shape", func(t *testing.T) {
		rep := gtr.Report{Packages: []gtr.Package{{
			Name: "example.com/pkg", Timestamp: t0, Duration: 1500 * time.Millisecond,
			Properties: []gtr.Property{{Name: "go.version", Value: "go1.26"}},
			Output:     []string{"package output"},
			Coverage:   81.5,
			Tests: []gtr.Test{
				{Name: "TestOK", Result: gtr.Pass, Duration: time.Millisecond, Output: []string{"log line"}},
				{Name: "TestBad", Result: gtr.Fail, Output: []string{"want 1, got 2 <&>"}},
				{Name: "TestSkip", Result: gtr.Skip, Output: []string{"skipping"}},
				{Name: "TestUnknown", Result: gtr.Unknown},
			},
			BuildError: gtr.Error{Name: "example.com/pkg [build failed]", Cause: "compile", Output: []string{"x.go:1: oops"}},
		}}}
		suites := junit.CreateFromReport(rep, "host")
		var buf bytes.Buffer
		buf.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
		if err := suites.WriteXML(&buf); err != nil {
			t.Fatal(err)
		}
		p := writeTemp(t, "gjr.xml", buf.Bytes())
		if msg, err := runTool(t, 30*time.Second, xmllint, "--noout", "--schema", xsdPath, p); err != nil {
			t.Fatalf("xmllint rejected go-junit-report output: %v\n%s", err, msg)
		}
	})
	// And the XSD is not a rubber stamp: broken shapes are rejected.
	bad := map[string]string{
		"testcase without name": `<testsuites><testsuite name="s" tests="1"><testcase classname="c"/></testsuite></testsuites>`,
		"negative count":        `<testsuites><testsuite name="s" tests="-1"></testsuite></testsuites>`,
		"unknown element":       `<testsuites><testsuite name="s" tests="0"><bogus/></testsuite></testsuites>`,
		"non-numeric time":      `<testsuites><testsuite name="s" tests="1"><testcase name="a" time="soon"/></testsuite></testsuites>`,
	}
	for name, doc := range bad {
		t.Run("rejects "+name, func(t *testing.T) {
			p := writeTemp(t, "bad.xml", []byte(doc))
			if msg, err := runTool(t, 30*time.Second, xmllint, "--noout", "--schema", xsdPath, p); err == nil {
				t.Fatalf("xmllint accepted an invalid document:\n%s", msg)
			}
		})
	}
}

// tapCheck is a TAP::Parser script printing what it parsed, one key=value per line.
const tapCheck = `
use strict; use warnings; use TAP::Parser;
my $p = TAP::Parser->new({ source => $ARGV[0] });
my ($yaml, $yamlmsg, $bail) = (0, 0, 0);
while (my $r = $p->next) {
  if ($r->is_yaml) { $yaml++; my $d = $r->data; $yamlmsg++ if ref $d eq 'HASH' && defined $d->{message} && defined $d->{severity}; }
  $bail++ if $r->is_bailout;
}
my @errs = $p->parse_errors;
print "version=", $p->version, "\n";
print "planned=", ($p->tests_planned // -1), "\n";
print "run=", $p->tests_run, "\n";
print "passed=", scalar($p->passed), "\n";
print "failed=", scalar($p->failed), "\n";
print "skipped=", scalar($p->skipped), "\n";
print "good_plan=", ($p->is_good_plan ? 1 : 0), "\n";
print "yaml=$yaml\nyaml_with_message=$yamlmsg\nbailout=$bail\n";
print "parse_errors=", scalar(@errs), "\n";
print "error: $_\n" for @errs;
`

func TestTAPParsesWithTAPParser(t *testing.T) {
	perl := consumer(t, "perl")
	script := writeTemp(t, "check.pl", []byte(tapCheck))
	cases := []struct {
		name   string
		run    *result.Run
		opts   func() *Options
		stream bool
		want   string
	}{
		{"sample", sampleRun(), nil, false,
			"version=13 planned=8 run=8 passed=5 failed=3 skipped=1 good_plan=1 yaml=3 yaml_with_message=3 bailout=0 parse_errors=0"},
		{"sample-streamed", sampleRun(), func() *Options { return &Options{Live: new(bytes.Buffer)} }, true,
			"version=13 planned=8 run=8 passed=5 failed=3 skipped=1 good_plan=1 yaml=3 yaml_with_message=3 bailout=0 parse_errors=0"},
		{"interrupted", interruptedRun(), nil, false,
			"version=13 planned=2 run=2 passed=2 failed=0 skipped=1 good_plan=1 yaml=0 yaml_with_message=0 bailout=1 parse_errors=0"},
		{"findings", findingsRun(), nil, false,
			"version=13 planned=2 run=2 passed=1 failed=1 skipped=0 good_plan=1 yaml=1 yaml_with_message=1 bailout=0 parse_errors=0"},
		{"findings-streamed", findingsRun(), func() *Options { return &Options{Live: new(bytes.Buffer)} }, true,
			"version=13 planned=2 run=2 passed=1 failed=1 skipped=0 good_plan=1 yaml=1 yaml_with_message=1 bailout=0 parse_errors=0"},
		{"empty", emptyRun(), nil, false,
			"version=13 planned=0 run=0 passed=0 failed=0 skipped=0 good_plan=1 yaml=0 yaml_with_message=0 bailout=0 parse_errors=0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var opts *Options
			if tc.opts != nil {
				opts = tc.opts()
			}
			p := writeTemp(t, tc.name+".tap", render(t, "tap", opts, tc.run, tc.stream))
			out, err := runTool(t, 30*time.Second, perl, script, p)
			if err != nil {
				t.Fatalf("perl: %v\n%s", err, out)
			}
			got := strings.Join(strings.Fields(out), " ")
			if got != tc.want {
				t.Errorf("TAP::Parser saw\n  %s\nwant\n  %s", got, tc.want)
			}
		})
	}
}

// tapMessages is a TAP::Parser script printing, as JSON, the message of every failure in each
// YAML diagnostics block, in order.
const tapMessages = `
use strict; use warnings; use TAP::Parser; use JSON::PP;
my $p = TAP::Parser->new({ source => $ARGV[0] });
my @msgs;
while (my $r = $p->next) {
  next unless $r->is_yaml;
  push @msgs, $_->{message} for @{ $r->data->{failures} || [] };
}
my @errs = $p->parse_errors;
print JSON::PP->new->canonical->encode({messages => \@msgs, errors => \@errs});
`

func TestTAPMultilineWithTAPParser(t *testing.T) {
	perl := consumer(t, "perl")
	script := writeTemp(t, "messages.pl", []byte(tapMessages))
	p := writeTemp(t, "multi.tap", render(t, "tap", nil, multilineRun(), false))
	out, err := runTool(t, 30*time.Second, perl, script, p)
	if err != nil {
		t.Fatalf("perl: %v\n%s", err, out)
	}
	var got struct {
		Messages []string
		Errors   []string
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("decode %q: %v", out, err)
	}
	if len(got.Errors) > 0 {
		t.Fatalf("TAP::Parser errors: %q\n%s", got.Errors, render(t, "tap", nil, multilineRun(), false))
	}
	if len(got.Messages) != len(multilineMessages) {
		t.Fatalf("read %d messages, want %d: %q", len(got.Messages), len(multilineMessages), got.Messages)
	}
	for i, want := range multilineMessages {
		// A "|" block implies one trailing newline; nothing else may change.
		if m := strings.TrimSuffix(got.Messages[i], "\n"); m != want {
			t.Errorf("message %d = %q, want %q", i, m, want)
		}
	}
	if out, err := runTool(t, 30*time.Second, consumer(t, "prove"), "-e", "cat", p); err == nil || !strings.Contains(out, "Failed 7/7 subtests") {
		t.Errorf("prove on multi-line failures: err=%v\n%s", err, out)
	}
}

func TestTAPWithProve(t *testing.T) {
	prove := consumer(t, "prove")
	// prove runs each file through `cat` and judges the stream like any TAP harness would.
	pass := writeTemp(t, "pass.tap", render(t, "tap", nil, passingRun(), false))
	if out, err := runTool(t, 30*time.Second, prove, "-e", "cat", pass); err != nil || !strings.Contains(out, "Result: PASS") {
		t.Errorf("prove on a passing run: err=%v\n%s", err, out)
	}
	fail := writeTemp(t, "fail.tap", render(t, "tap", nil, sampleRun(), false))
	out, err := runTool(t, 30*time.Second, prove, "-e", "cat", fail)
	if err == nil || !strings.Contains(out, "Result: FAIL") || !strings.Contains(out, "Failed 3/8 subtests") {
		t.Errorf("prove on a failing run: err=%v\n%s", err, out)
	}
}

func TestHTMLInHeadlessChromium(t *testing.T) {
	chromium := consumer(t, "chromium")
	page := writeTemp(t, "report.html", render(t, "html", nil, sampleRun(), false))
	url := "file://" + page
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync"}

	png := filepath.Join(t.TempDir(), "out.png")
	args := append(append([]string{}, base...), "--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0",
		"--screenshot="+png, "--window-size=1280,1600", url)
	logs, err := runTool(t, 90*time.Second, chromium, args...)
	if err != nil {
		t.Fatalf("chromium screenshot: %v\n%s", err, logs)
	}
	img, err := os.ReadFile(png)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, logs)
	}
	if len(img) < 20_000 || !bytes.HasPrefix(img, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("screenshot looks empty: %d bytes", len(img))
	}
	if m := pageConsoleProblems(logs); len(m) > 0 {
		t.Errorf("console errors while rendering:\n%s", strings.Join(m, "\n"))
	}

	args = append(append([]string{}, base...), "--user-data-dir="+t.TempDir(), "--dump-dom", url)
	dom, err := runTool(t, 90*time.Second, chromium, args...)
	if err != nil {
		t.Fatalf("chromium dump-dom: %v\n%s", err, dom)
	}
	for _, want := range []string{
		`id="summary"`, `<span class="verdict fail">FAIL</span>`, `<b>57.1%</b>pass rate`, `Failures (3)`,
		`id="f-t2"`, `<svg class="chart"`, `&lt;script&gt;alert`, `add &lt;a&gt; &amp; "b"`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %q", want)
		}
	}
	if strings.Contains(dom, "<script") {
		t.Errorf("rendered DOM contains a script element: escaping failed")
	}
}

// consoleLine matches a line of Chromium's log that reports a console message or a load or
// policy failure.
var consoleLine = regexp.MustCompile(`(?m)^.*(Uncaught|CONSOLE|Refused to|Failed to load resource).*$`)

// chromiumOwnSource matches the source of a console message logged by one of Chromium's own
// pages (its WebUI, e.g. the omnibox composebox it preloads), not by the page under test.
var chromiumOwnSource = regexp.MustCompile(`, source: (chrome|chrome-untrusted|devtools)://`)

// pageConsoleProblems returns the lines of Chromium's log that report a console message or a
// failure of the page under test. Messages from Chromium's own pages are left out: on a loaded
// machine its preloaded WebUI logs "Slow network is detected" about its own fonts, which says
// nothing about our report.
func pageConsoleProblems(logs string) []string {
	var out []string
	for _, l := range consoleLine.FindAllString(logs, -1) {
		if !chromiumOwnSource.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

func TestPageConsoleProblems(t *testing.T) {
	cases := []struct {
		name string
		logs string
		want int
	}{
		{"chromium's own page, slow fonts (seen on a loaded CI box)",
			`[28671:28671:1126/003922.497271:INFO:CONSOLE:574] "Slow network is detected. See https://www.chromestatus.com/feature/5636954674692096 for more details. Fallback font will be used while loading: chrome://resources/roboto/roboto-regular.woff2", source: chrome://resources/cr_components/composebox/composebox_input.js (574)`,
			0},
		{"chrome-untrusted page", `[1:1:1126/003922.497271:INFO:CONSOLE:1] "x", source: chrome-untrusted://compose/app.js (1)`, 0},
		{"dbus noise", `[30985:31015:1126/004456.838989:ERROR:dbus/bus.cc:405] Failed to connect to the bus`, 0},
		{"uncaught error in the report",
			`[9:9:1126/003922.497271:INFO:CONSOLE:3] "Uncaught ReferenceError: x is not defined", source: file:///tmp/report.html (3)`, 1},
		{"console message from the report", `[9:9:1126/003922.497271:INFO:CONSOLE:3] "hello", source: file:///tmp/report.html (3)`, 1},
		{"blocked resource",
			"[9:9:1126/003922.497271:INFO:CONSOLE:0] \"Refused to load the image 'https://example.com/x.png'\", source: file:///tmp/report.html (0)\n" +
				`[9:9:1126/003922.497271:INFO:CONSOLE:0] "Failed to load resource: net::ERR_FILE_NOT_FOUND", source: file:///tmp/x.css (0)`, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := pageConsoleProblems(tc.logs); len(got) != tc.want {
				t.Errorf("got %d problems %q, want %d", len(got), got, tc.want)
			}
		})
	}
}
