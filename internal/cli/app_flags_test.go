package cli

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

// TestFlagsOneDefaultOneName walks every verb's flags: no name or alias twice on one verb, and
// no flag whose help states its default twice (issue 16: load's --duration showed "(default
// 10s, soak 1h) (default: 0s)").
func TestFlagsOneDefaultOneName(t *testing.T) {
	a := newApp(&IO{})
	var walk func(prefix string, cs []*cli.Command)
	walk = func(prefix string, cs []*cli.Command) {
		for _, c := range cs {
			name := strings.TrimSpace(prefix + " " + c.Name)
			seen := map[string]bool{}
			for _, f := range c.Flags {
				for _, n := range f.Names() {
					if seen[n] {
						t.Errorf("%s: flag --%s is defined twice", name, n)
					}
					seen[n] = true
				}
				help := fmt.Sprint(f)
				if n := strings.Count(help, "(default"); n > 1 {
					t.Errorf("%s: --%s states its default %d times: %s", name, f.Names()[0], n, help)
				}
				// A default in the usage text and the zero value printed after it contradict.
				zero := regexp.MustCompile(`\(default: (0|0s|"")\)$`)
				if strings.Count(help, "default") > 1 && zero.MatchString(help) {
					t.Errorf("%s: --%s states a default and a zero one: %s", name, f.Names()[0], help)
				}
			}
			walk(name, c.Commands)
		}
	}
	walk("", a.root().Commands)
}

// spellings are the names one concept has had, or might be given, across verbs. A verb shows at
// most one spelling of a concept; the others exist only as hidden aliases that warn.
var spellings = []struct {
	concept string
	names   []string
	// old are spellings kept only as hidden, warned aliases: never shown by any verb.
	old []string
}{
	{"a collection's environment", []string{"env", "environment"}, []string{"environment"}},
	// --env K=V, the old --server-env, is hidden on the server verbs and a value form of load's
	// --env NAME, so "env" is not listed here: it belongs to the environment concept.
	{"a variable of the server's environment", []string{"server-env", "server-environment"}, nil},
	{"how long a request may go unanswered", []string{"hang-threshold", "hang-after", "hang-timeout"}, nil},
	{"a bound on the whole run", []string{"max-time", "time", "time-limit"}, nil},
	{"how many calls at once", []string{"concurrency", "parallel", "workers"}, nil},
	{"how many iterations", []string{"iterations", "count"}, nil},
	{"reports and their format", []string{"reporter", "format", "report"}, nil},
	{"where output goes", []string{"out", "output", "output-dir"}, nil},
	{"silence progress", []string{"quiet", "silent"}, nil},
	{"a tool's arguments", []string{"args", "arguments", "params"}, nil},
	{"the request deadline", []string{"timeout", "request-timeout"}, nil},
	{"the server", []string{"server", "servers", "url"}, nil},
	{"the random seed", []string{"seed", "random-seed"}, nil},
	{"an HTTP header", []string{"header", "headers"}, nil},
}

// hiddenAliases are every hidden flag a verb may have: the old spelling and the name it became.
// A hidden flag is a warned alias of a visible one, never a secret feature.
var hiddenAliases = map[string]string{
	"env":            "server-env", // on the server verbs (load: --env NAME is visible)
	"environment":    "env",
	"hang-threshold": "hang-after", // deadlock and fuzz
}

// TestFlagsOneNamePerConcept walks every verb's flags: a verb shows one spelling of each
// concept in [spellings], never an old one, and each hidden flag is a deprecated alias of a
// flag the verb shows (issue 16: fuzz listed both --hang-threshold and --hang-after; load showed
// --environment where test and validate say --env).
func TestFlagsOneNamePerConcept(t *testing.T) {
	a := newApp(&IO{})
	var walk func(prefix string, cs []*cli.Command)
	walk = func(prefix string, cs []*cli.Command) {
		for _, c := range cs {
			name := strings.TrimSpace(prefix + " " + c.Name)
			visible := map[string]bool{}
			var hidden []cli.Flag
			for _, f := range c.Flags {
				if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
					hidden = append(hidden, f)
					continue
				}
				for _, n := range f.Names() {
					visible[n] = true
				}
			}
			for _, s := range spellings {
				var shown []string
				for _, n := range s.names {
					if visible[n] {
						shown = append(shown, "--"+n)
					}
				}
				if len(shown) > 1 {
					t.Errorf("%s: %s is spelled %s: show one, keep the others as hidden warned aliases", name, s.concept, strings.Join(shown, " and "))
				}
				for _, n := range s.old {
					if visible[n] {
						t.Errorf("%s: shows --%s, the old spelling of %s", name, n, s.concept)
					}
				}
			}
			for _, f := range hidden {
				old := f.Names()[0]
				now, ok := hiddenAliases[old]
				switch {
				case !ok:
					t.Errorf("%s: hidden flag --%s is no known old spelling: show it, or add it to hiddenAliases", name, old)
				case !visible[now]:
					t.Errorf("%s: hidden --%s stands for --%s, which the verb does not show", name, old, now)
				}
				if u := fmt.Sprint(f); !strings.Contains(u, "deprecated") {
					t.Errorf("%s: hidden --%s does not say it is deprecated: %s", name, old, u)
				}
			}
			walk(name, c.Commands)
		}
	}
	walk("", a.root().Commands)
}
