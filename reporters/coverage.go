package reporters

import (
	"fmt"
	"strings"

	"github.com/mcpspec/mcpspec/result"
)

// maxMissedNames bounds the names of missed items a one-line summary lists.
const maxMissedNames = 8

// coverageKind is one kind of one server's coverage, named.
type coverageKind struct {
	Name string // "tools", "prompts", "resources"
	K    *result.KindCoverage
}

// kinds lists a server's covered kinds in a fixed order, skipping those it does not offer.
func kinds(s result.ServerCoverage) []coverageKind {
	var out []coverageKind
	for _, k := range []coverageKind{{"tools", s.Tools}, {"prompts", s.Prompts}, {"resources", s.Resources}} {
		if k.K != nil {
			out = append(out, k)
		}
	}
	return out
}

// coverageTotal is "60% (6 of 10 advertised tools, prompts and resources)", or "" when no
// collection recorded coverage.
func coverageTotal(run *result.Run) string {
	known := false
	for _, c := range run.Collections {
		if c != nil && c.Coverage != nil {
			known = true
		}
	}
	if !known {
		return ""
	}
	e, a := run.Coverage()
	return fmt.Sprintf("%s (%d of %d advertised tools, prompts and resources exercised)", percent(e, a), e, a)
}

// serverCoverageLine is "tools 3/7 · prompts 0/1 · resources 2/4".
func serverCoverageLine(s result.ServerCoverage) string {
	var parts []string
	for _, k := range kinds(s) {
		parts = append(parts, fmt.Sprintf("%s %d/%d", k.Name, len(k.K.Exercised), k.K.Advertised))
	}
	if len(parts) == 0 {
		return "nothing advertised"
	}
	return strings.Join(parts, " · ")
}

// missedLine lists what was never exercised: "tools flaky, error; prompts greet", cut to a
// few names per kind.
func missedLine(s result.ServerCoverage) string {
	var parts []string
	for _, k := range kinds(s) {
		if len(k.K.Missed) == 0 {
			continue
		}
		names := k.K.Missed
		more := ""
		if len(names) > maxMissedNames {
			more = fmt.Sprintf(", … (%d more)", len(names)-maxMissedNames)
			names = names[:maxMissedNames]
		}
		parts = append(parts, k.Name+" "+strings.Join(names, ", ")+more)
	}
	return strings.Join(parts, "; ")
}

func percent(e, a int) string {
	return fmt.Sprintf("%.0f%%", result.Percent(e, a))
}
