package cli

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// helpShape reduces a verb's --help to its layout: the section headings in order, and whether
// each option line reads "   --name …  usage" as the other verbs' do.
func helpShape(t *testing.T, args ...string) (sections []string, options []string) {
	t.Helper()
	var stdout, stderr strings.Builder
	if code := Run(t.Context(), append([]string{"mcpspec"}, args...), &IO{Stdout: &stdout, Stderr: &stderr, NoHistory: true}); code != ExitOK {
		t.Fatalf("%s: exit %d, stderr %q", strings.Join(args, " "), code, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("%s: help went to stderr: %q", strings.Join(args, " "), stderr.String())
	}
	option := regexp.MustCompile(`^   (--[a-z0-9-]+)(?:[ ,].*)?  +\S`)
	for _, l := range strings.Split(stdout.String(), "\n") {
		switch {
		case regexp.MustCompile(`^[A-Z ]+:$`).MatchString(l):
			sections = append(sections, l)
		case option.MatchString(l):
			options = append(options, option.FindStringSubmatch(l)[1])
		}
	}
	return sections, options
}

// TestTestserverHelpShape: testserver --help reads like every other verb's help (issue 16: it
// printed Go's "Usage of testserver:" and "-flag\n\tusage" on stderr).
func TestTestserverHelpShape(t *testing.T) {
	want, _ := helpShape(t, "call", "--help")
	for _, args := range [][]string{{"testserver", "--help"}, {"testserver", "-h"}} {
		got, opts := helpShape(t, args...)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: sections differ from call --help (-call +testserver):\n%s", strings.Join(args, " "), d)
		}
		for _, name := range []string{"--transport", "--addr", "--hang-first-call", "--delay", "--workers", "--help"} {
			if !strings.Contains(strings.Join(opts, " ")+" ", name+" ") {
				t.Errorf("%s: no option line for %s in %q", strings.Join(args, " "), name, opts)
			}
		}
	}
}
