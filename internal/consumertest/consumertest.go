// Package consumertest runs the real consumers of mcpspec's output in tests — headless
// Chromium for HTML pages — skipping when one is not installed, unless MCPSPEC_CONSUMERS=1
// (CI sets it): then a missing consumer fails the test. The reporters' own tests keep their
// copy for now; new outputs use this one.
package consumertest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// Require finds name on PATH or skips the test (fails it under MCPSPEC_CONSUMERS=1).
func Require(t testing.TB, name string) string {
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

// Run runs a consumer with a deadline and returns its combined output and exit error.
func Run(t testing.TB, timeout time.Duration, name string, args ...string) (string, error) {
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

// chromiumFlags keep headless Chromium offline and quiet.
var chromiumFlags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync"}

// Chromium renders the HTML file at path in headless Chromium: it fails the test when the
// screenshot is empty or the page logged a console message or a load failure, and returns the
// DOM Chromium built from the page.
func Chromium(t testing.TB, path string) string {
	t.Helper()
	chromium := Require(t, "chromium")
	url := "file://" + path
	png := filepath.Join(t.TempDir(), "out.png")
	args := append(append([]string{}, chromiumFlags...), "--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0",
		"--screenshot="+png, "--window-size=1280,1600", url)
	logs, err := Run(t, 90*time.Second, chromium, args...)
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
	for _, m := range PageConsoleProblems(logs) {
		t.Errorf("console message or load failure while rendering: %s", m)
	}
	args = append(append([]string{}, chromiumFlags...), "--user-data-dir="+t.TempDir(), "--dump-dom", url)
	dom, err := Run(t, 90*time.Second, chromium, args...)
	if err != nil {
		t.Fatalf("chromium dump-dom: %v\n%s", err, dom)
	}
	return dom
}

// consoleLine matches a line of Chromium's log that reports a console message or a load or
// policy failure.
var consoleLine = regexp.MustCompile(`(?m)^.*(Uncaught|CONSOLE|Refused to|Failed to load resource).*$`)

// chromiumOwnSource matches a console message of one of Chromium's own pages.
var chromiumOwnSource = regexp.MustCompile(`, source: (chrome|chrome-untrusted|devtools)://`)

// PageConsoleProblems returns the lines of Chromium's log that report a console message or a
// failure of the page under test, leaving out Chromium's own pages.
func PageConsoleProblems(logs string) []string {
	var out []string
	for _, l := range consoleLine.FindAllString(logs, -1) {
		if !chromiumOwnSource.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}
