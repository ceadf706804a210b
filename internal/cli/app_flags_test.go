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
