package cli

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/urfave/cli/v3"
)

// The flag library's parse errors, which name flags with a single dash and quote Go's own
// parse errors; usageError rewrites them.
var (
	unknownFlagRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^flag provided but not defined: -+(.+)$`) })
	missingValueRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^flag needs an argument: -*(.+)$`) })
	badValueRE     = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^invalid value "((?:[^"\\]|\\.)*)" for flag -+([^:]+): `)
	})
)

// errDuplicateFlag ends the flag library's error for a second value of a flag marked OnlyOnce.
const errDuplicateFlag = "can't duplicate this flag"

// usageError is a command-line mistake: exit 3 with what was wrong in the user's terms (the
// flag as typed, a close flag name when there is one) and a pointer to the verb's help.
func usageError(cmd *cli.Command, err error) error {
	e := &Error{Code: ExitConfig, Msg: err.Error(), Hint: fmt.Sprintf("run '%s --help' for usage", cmd.FullName()), Err: err}
	msg := err.Error()
	switch {
	case unknownFlagRE().MatchString(msg):
		name := unknownFlagRE().FindStringSubmatch(msg)[1]
		e.Msg = fmt.Sprintf("unknown flag %s for '%s'", flagText(name), cmd.FullName())
		if hint := flagHint(cmd, name); hint != "" {
			e.Hint = withSuggestion(hint, e.Hint)
		}
	case missingValueRE().MatchString(msg):
		name := missingValueRE().FindStringSubmatch(msg)[1]
		e.Msg = fmt.Sprintf("flag %s needs a value", flagText(name))
		if f := findFlag(cmd, name); f != nil {
			if ex := flagExample(f); ex != "" {
				e.Hint = fmt.Sprintf("e.g. %s %s (%s)", flagText(name), ex, e.Hint)
			}
		}
	case badValueRE().MatchString(msg) && strings.HasSuffix(msg, errDuplicateFlag):
		name := badValueRE().FindStringSubmatch(msg)[2]
		if f := findFlag(cmd, name); f != nil {
			name = f.Names()[0]
		}
		e.Msg = fmt.Sprintf("%s given more than once", flagText(name))
		if name == "server" {
			e.Msg += fmt.Sprintf(": '%s' talks to one server", cmd.FullName())
			e.Hint = "keep one --server and run the command once per server; to put servers side by side under the same workload: mcpspec load --server A --server B"
		} else {
			e.Hint = fmt.Sprintf("give %s once (%s)", flagText(name), e.Hint)
		}
	case badValueRE().MatchString(msg):
		m := badValueRE().FindStringSubmatch(msg)
		val, name := m[1], m[2]
		f := findFlag(cmd, name)
		switch f.(type) {
		case *durationFlag:
			problem := "is not a duration"
			if strings.Contains(msg, "out of range") {
				problem = "is out of range"
			}
			e.Msg = fmt.Sprintf("%s %q %s", flagText(name), val, problem)
			e.Hint = fmt.Sprintf("write a duration with a unit, e.g. %s 30s, 500ms or 2m (a bare number is milliseconds)", flagText(name))
		case *cli.IntFlag:
			e.Msg = fmt.Sprintf("%s %q is not a whole number", flagText(name), val)
			e.Hint = fmt.Sprintf("e.g. %s 4", flagText(name))
		case *cli.FloatFlag:
			e.Msg = fmt.Sprintf("%s %q is not a number", flagText(name), val)
			e.Hint = fmt.Sprintf("e.g. %s 10", flagText(name))
		case *cli.BoolFlag:
			e.Msg = fmt.Sprintf("%s=%s: the value of a switch is true or false", flagText(name), val)
			e.Hint = fmt.Sprintf("write %s alone to turn it on", flagText(name))
		}
	}
	return e
}

// withSuggestion puts a "did you mean" suggestion, when there is one, before the general hint.
func withSuggestion(suggestion, hint string) string {
	if suggestion == "" {
		return hint
	}
	return suggestion + " (" + hint + ")"
}

// flagText writes a flag name the way the user types it: -s, --server.
func flagText(name string) string {
	if len([]rune(name)) == 1 {
		return "-" + name
	}
	return "--" + name
}

// findFlag returns cmd's flag called name (or alias), or nil.
func findFlag(cmd *cli.Command, name string) cli.Flag {
	for _, f := range cmd.Flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

// flagExample is an example value for f, or "".
func flagExample(f cli.Flag) string {
	switch f.(type) {
	case *durationFlag:
		return "30s"
	case *cli.IntFlag:
		return "4"
	case *cli.FloatFlag:
		return "10"
	}
	return ""
}

// flagHint suggests what the user meant by an unknown flag: a flag of the verb spelled alike.
func flagHint(cmd *cli.Command, name string) string {
	name = strings.SplitN(name, "=", 2)[0]
	var names []string
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if len(n) > 1 {
				names = append(names, n)
			}
		}
	}
	if root := cmd.Root(); root != cmd {
		for _, f := range root.Flags {
			for _, n := range f.Names() {
				if len(n) > 1 {
					names = append(names, n)
				}
			}
		}
	}
	if s := closest(name, names); s != "" {
		return "did you mean " + flagText(s) + "?"
	}
	return ""
}

// commandHint suggests a command spelled like name among cmds, or "".
func commandHint(name string, cmds []*cli.Command) string {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	return commandHintNames(name, names)
}

// commandHintNames suggests one of names spelled like name, or "".
func commandHintNames(name string, names []string) string {
	if s := closest(name, names); s != "" {
		return fmt.Sprintf("did you mean '%s'?", s)
	}
	return ""
}

// closest returns the candidate nearest to s by edit distance when it is near enough to be a
// typo (at most 1 edit for short words, 2 from 5 letters, 3 from 9) or s is a prefix of it;
// otherwise "".
func closest(s string, candidates []string) string {
	s = strings.ToLower(s)
	limit := 1
	switch {
	case len(s) >= 9:
		limit = 3
	case len(s) >= 5:
		limit = 2
	}
	best, bestD := "", limit+1
	for _, c := range candidates {
		if d := editDistance(s, strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if best != "" {
		return best
	}
	if len(s) >= 3 {
		for _, c := range candidates {
			if strings.HasPrefix(strings.ToLower(c), s) {
				return c
			}
		}
	}
	return ""
}

// editDistance is the Damerau–Levenshtein distance (optimal string alignment: adjacent
// transpositions count once) between a and b, in bytes; long strings are never close.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 20
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
