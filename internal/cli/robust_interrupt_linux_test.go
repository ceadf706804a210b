//go:build linux

package cli

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/internal/poll"
	"github.com/mcpspec/mcpspec/result"
)

// interruptCollection has five tests; the third calls `slow` for a minute. The server is
// sh → tee + testserver, so the test sees on disk (IN) when that call reached the server.
const interruptCollection = `name: Interrupted
server: "sh -c 'tee %s | mcpspec testserver'"
defaults:
  timeout: 2m
tests:
  - name: First echo
    call: echo
    with: {text: one}
    expect: [contains: one]
  - name: Second echo
    call: echo
    with: {text: two}
    expect: [contains: two]
  - name: Slow call
    call: slow
    with: {milliseconds: 60000}
  - name: Fourth echo
    call: echo
    with: {text: four}
  - name: Fifth echo
    call: echo
    with: {text: five}
`

// TestInterruptFlushesReports interrupts `mcpspec test` while its third test is in flight and
// checks the promise of the help text: exit 130, every report file written and readable by
// its consumers, the partial results true to what happened, and no server process left.
func TestInterruptFlushesReports(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "in.log")
			writeFile(t, dir, "slow.yaml", fmt.Sprintf(interruptCollection, in))
			p := startMcpspec(t, dir, "test", "slow.yaml",
				"--reporter", "junit=out/junit.xml", "--reporter", "tap=out/r.tap",
				"--reporter", "json=out/r.json", "--reporter", "html=out/r.html")

			poll.Until(t, 15*time.Second, "the slow call to reach the server", func() bool {
				b, _ := os.ReadFile(in)
				return strings.Contains(string(b), `"slow"`)
			})
			p.signal(t, sig)
			if code := p.wait(t, 15*time.Second); code != int(ExitInterrupted) {
				t.Errorf("exit code = %d, want %d\nstderr:\n%s", code, ExitInterrupted, p.stderr.String())
			}
			assertNoPanic(t, p.stderr.String())
			if !strings.Contains(p.stderr.String(), "interrupted") {
				t.Errorf("stderr does not say the run was interrupted:\n%s", p.stderr.String())
			}
			p.assertNoLeftovers(t)

			checkInterruptedJSON(t, filepath.Join(dir, "out", "r.json"))
			checkInterruptedJUnit(t, filepath.Join(dir, "out", "junit.xml"))
			checkInterruptedTAP(t, filepath.Join(dir, "out", "r.tap"))
			html, err := os.ReadFile(filepath.Join(dir, "out", "r.html"))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"<html", "Second echo", "Slow call", "</html>"} {
				if !strings.Contains(string(html), want) {
					t.Errorf("the HTML report lacks %q", want)
				}
			}
			// The run is saved for `mcpspec baseline save` too.
			if _, err := os.Stat(filepath.Join(dir, ".mcpspec", "runs", "latest.json")); err != nil {
				t.Errorf("the partial run was not saved: %v", err)
			}
		})
	}
}

// wantInterrupted is the status of each test of interruptCollection after the interrupt.
var wantInterrupted = []string{"First echo passed", "Second echo passed", "Slow call error Cancelled", "Fourth echo skipped", "Fifth echo skipped"}

func checkInterruptedJSON(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var run result.Run
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatalf("the JSON report does not decode: %v\n%s", err, tail(string(b)))
	}
	if !run.Interrupted {
		t.Errorf("the JSON report does not say the run was interrupted")
	}
	if len(run.Collections) != 1 {
		t.Fatalf("JSON report: %d collections, want 1", len(run.Collections))
	}
	var got []string
	for _, rt := range run.Collections[0].Tests {
		s := rt.Name + " " + string(rt.Status)
		if rt.Error != nil {
			s += " " + string(rt.Error.Category)
		}
		got = append(got, s)
	}
	if d := cmp.Diff(wantInterrupted, got); d != "" {
		t.Errorf("JSON report tests (-want +got):\n%s", d)
	}
}

func checkInterruptedJUnit(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Tests   int `xml:"tests,attr"`
			Errors  int `xml:"errors,attr"`
			Skipped int `xml:"skipped,attr"`
			Cases   []struct {
				Name    string    `xml:"name,attr"`
				Error   *struct{} `xml:"error"`
				Skipped *struct{} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("the JUnit report is not XML: %v\n%s", err, tail(string(b)))
	}
	if len(doc.Suites) != 1 || doc.Suites[0].Tests != 5 || doc.Suites[0].Errors != 1 || doc.Suites[0].Skipped != 2 || len(doc.Suites[0].Cases) != 5 {
		t.Errorf("JUnit report: want one suite of 5 tests, 1 error, 2 skipped:\n%s", tail(string(b)))
	}
	if xmllint, ok := optionalTool(t, "xmllint"); ok {
		xsd := filepath.Join("..", "..", "testdata", "junit", "junit.xsd")
		if out, err := runConsumer(t, xmllint, "--noout", "--schema", xsd, path); err != nil {
			t.Errorf("xmllint rejects the JUnit report of an interrupted run: %v\n%s", err, out)
		}
	}
}

// tapSummary is a TAP::Parser script printing what it parsed of the file in ARGV[0].
const tapSummary = `
use strict; use warnings; use TAP::Parser;
my $p = TAP::Parser->new({ source => $ARGV[0] });
my $bail = 0;
while (my $r = $p->next) { $bail++ if $r->is_bailout; }
my @errs = $p->parse_errors;
print "planned=", ($p->tests_planned // -1), " run=", $p->tests_run, " passed=", scalar($p->passed),
  " failed=", scalar($p->failed), " skipped=", scalar($p->skipped), " bailout=$bail parse_errors=", scalar(@errs), "\n";
`

func checkInterruptedTAP(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\nBail out!") {
		t.Errorf("the TAP report of an interrupted run has no \"Bail out!\":\n%s", b)
	}
	perl, ok := optionalTool(t, "perl")
	if !ok {
		return
	}
	script := writeFile(t, t.TempDir(), "summary.pl", tapSummary)
	out, err := runConsumer(t, perl, script, path)
	if err != nil {
		t.Fatalf("TAP::Parser: %v\n%s", err, out)
	}
	const want = "planned=5 run=5 passed=4 failed=1 skipped=2 bailout=1 parse_errors=0"
	if got := strings.TrimSpace(out); got != want {
		t.Errorf("TAP::Parser saw\n  %s\nwant\n  %s\nin:\n%s", got, want, b)
	}
}

// runConsumer runs a consumer program for at most 30 seconds and returns its combined output.
func runConsumer(t *testing.T, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish within 30s:\n%s", name, out)
	}
	return string(out), err
}
