package cli

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

// exitCodeTable reads the table of docs/exit-codes.md: code → meaning.
func exitCodeTable(t *testing.T) map[int]string {
	t.Helper()
	b, err := os.ReadFile("../../docs/exit-codes.md")
	if err != nil {
		t.Fatal(err)
	}
	table := map[int]string{}
	row := regexp.MustCompile(`(?m)^\| (\d+) \| (.*) \|$`)
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		n, _ := strconv.Atoi(m[1])
		table[n] = m[2]
	}
	if len(table) == 0 {
		t.Fatal("no exit code rows in docs/exit-codes.md")
	}
	return table
}

// exitCodesIn returns the codes an "Exit codes: 0 … · 1 … · 130 …" text lists.
func exitCodesIn(text string) map[int]string {
	out := map[int]string{}
	for _, seg := range strings.Split(text, "Exit codes:")[1:] {
		seg, _, _ = strings.Cut(seg, "\n\n")
		seg = strings.Join(strings.Fields(seg), " ")
		for _, item := range strings.Split(seg, "·") {
			item = strings.TrimSpace(item)
			num, rest, _ := strings.Cut(item, " ")
			if n, err := strconv.Atoi(num); err == nil {
				out[n] = rest
			}
		}
	}
	return out
}

// TestExitCodesMatchTable checks every verb's help against docs/exit-codes.md: the root help
// lists exactly the table's codes (a reserved one says so), the ExitCode constants are the
// table, and no verb promises a code the table does not have or one that is reserved. Before
// issue 16 the root help listed 7 without "reserved", and race and head-of-line promised 2 for
// "could not tell" (2 is a runtime error).
func TestExitCodesMatchTable(t *testing.T) {
	table := exitCodeTable(t)
	consts := []ExitCode{ExitOK, ExitFailure, ExitRuntime, ExitConfig, ExitConnection, ExitTimeout, ExitSecurity, ExitValidation, ExitNotTested, ExitInterrupted}
	if len(consts) != len(table) {
		t.Errorf("docs/exit-codes.md has %d codes, app_exitcodes.go %d", len(table), len(consts))
	}
	for _, c := range consts {
		if _, ok := table[int(c)]; !ok {
			t.Errorf("exit code %d is not in docs/exit-codes.md", c)
		}
	}
	root := exitCodesIn(rootDescription)
	for code, meaning := range table {
		help, ok := root[code]
		switch {
		case !ok:
			t.Errorf("mcpspec --help does not list exit code %d (%s)", code, meaning)
		case strings.Contains(meaning, "reserved") != strings.Contains(help, "reserved"):
			t.Errorf("exit code %d: the table says %q, mcpspec --help %q (reserved in one, not the other)", code, meaning, help)
		}
	}
	for code := range root {
		if _, ok := table[code]; !ok {
			t.Errorf("mcpspec --help lists exit code %d, which docs/exit-codes.md does not have", code)
		}
	}
	a := newApp(&IO{})
	var walk func(prefix string, cs []*cli.Command)
	walk = func(prefix string, cs []*cli.Command) {
		for _, c := range cs {
			name := strings.TrimSpace(prefix + " " + c.Name)
			for code, what := range exitCodesIn(c.UsageText + "\n\n" + c.Description) {
				meaning, ok := table[code]
				switch {
				case !ok:
					t.Errorf("%s --help promises exit code %d (%s), which docs/exit-codes.md does not have", name, code, what)
				case strings.Contains(meaning, "reserved"):
					t.Errorf("%s --help promises exit code %d (%s), which is reserved", name, code, what)
				case code == int(ExitRuntime) && !regexp.MustCompile(`(?i)runtime|JSON-RPC|malformed|server error`).MatchString(what):
					t.Errorf("%s --help promises exit code 2 for %q: 2 is a runtime error (JSON-RPC error, malformed answer)", name, what)
				}
			}
			walk(name, c.Commands)
		}
	}
	walk("", a.root().Commands)
}
