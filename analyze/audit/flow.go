package audit

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"golang.org/x/text/unicode/norm"
)

// toolsOf returns the tool items of a list.
func toolsOf(its []*item) []*item {
	var out []*item
	for _, it := range its {
		if it.subject.Kind == KindTool && it.bad == nil {
			out = append(out, it)
		}
	}
	return out
}

// rewriteNear matches behaviour-changing language around a mention of another tool ("when X is
// called", "X must always", "override X"); TOOL stands for the quoted tool name.
const rewriteNear = `(?i)(\b(when|whenever|before|after|every time|each time)\b[^.\n]{0,30}\bTOOL\b[^.\n]{0,20}\b(is |are )?(used|called|invoked|run|executed|available|present)\b|\bTOOL\b[^.\n]{0,25}\b(must|should|shall|will now|has to|needs to)\b[^.\n]{0,15}\b(always|never|also|now|instead|only|send|include|add|use|be|redirect|forward|bcc|cc)\b|\b(override|overrides|replace|replaces|redirect|redirects|modify|modifies|change|changes|hijack|intercept|intercepts|wrap|wraps)\b[^.\n]{0,30}\b(the )?(behaviou?r of |calls? to |results? of |output of )?TOOL\b|\b(do not|don't|never) (use|call|invoke|trust)\s+(the\s+)?TOOL\b[^.\n]{0,40}\b(instead|only this|use this)|\bside effect\b[^.\n]{0,60}\bTOOL\b)`

// allTools matches descriptions that address every other tool at once.
var allTools = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(all|any|every|each)\s+(other\s+)?(tools?|functions?|servers?)\b[^.\n]{0,30}\b(must|should|shall|will|need to|are required to)\b[^.\n]{0,20}\b(first|always|also|never|include|send|call|use)\b|\bbefore (calling|using|invoking) (any|every|each) (other )?(tool|function)`)
})

// collisionFindings reports the audited server's tools whose names equal, or are confusable
// with, a tool of another audited server.
func collisionFindings(ctx context.Context, its []*item, others [][]*item) ([]Finding, error) {
	var out []Finding
	rc, _ := RuleByID(RuleNameCollision)
	rn, _ := RuleByID(RuleNameConfusable)
	var theirs []*item
	for _, o := range others {
		theirs = append(theirs, toolsOf(o)...)
	}
	if len(theirs) == 0 {
		return nil, nil
	}
	skel := make([]string, len(theirs))
	for i, u := range theirs {
		skel[i] = skeleton(u.subject.Name)
	}
	for _, t := range toolsOf(its) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		a, sa := t.subject.Name, skeleton(t.subject.Name)
		for i, u := range theirs {
			b := u.subject.Name
			switch {
			case a == b:
				out = append(out, Finding{RuleID: rc.ID, Severity: rc.Severity, Confidence: Certain, Subject: t.subject, Related: []Subject{u.subject},
					Message:  fmt.Sprintf("%s also exposes a tool named %q", u.subject.Server, b),
					Evidence: evidence("/name", a, 0, len(a), ""), Fix: rc.Fix,
					Signals: []Signal{{Kind: "same-name", Text: b}}})
			case sa == skel[i] || nearMiss(a, b):
				out = append(out, Finding{RuleID: rn.ID, Severity: rn.Severity, Confidence: Firm, Subject: t.subject, Related: []Subject{u.subject},
					Message:  fmt.Sprintf("%q is confusable with %q of %s", a, b, u.subject.Server),
					Evidence: evidence("/name", a, 0, len(a), ""), Fix: rn.Fix,
					Signals: []Signal{{Kind: "near-miss", Text: b}}})
			}
		}
	}
	return out, nil
}

// nearMiss reports names within one edit (two for names of 12 characters or more) when both are
// at least 5 characters long.
func nearMiss(a, b string) bool {
	if len(a) < 5 || len(b) < 5 {
		return false
	}
	limit := 1
	if min(len(a), len(b)) >= 12 {
		limit = 2
	}
	return editDistance(strings.ToLower(a), strings.ToLower(b), limit) <= limit
}

// confusables folds common look-alike characters onto ASCII.
var confusables = map[rune]rune{
	'0': 'o', '1': 'l', 'I': 'l', 'і': 'i', 'а': 'a', 'е': 'e', 'о': 'o', 'р': 'p', 'с': 'c', 'х': 'x', 'у': 'y',
	'ԁ': 'd', 'ѕ': 's', 'ј': 'j', 'ӏ': 'l', 'ɡ': 'g', 'ο': 'o', 'α': 'a', 'ν': 'v', 'τ': 't', '-': '_', '.': '_',
}

// skeleton folds s for look-alike comparison (NFKC, lower case, confusables, separators).
func skeleton(s string) string {
	s = norm.NFKC.String(s)
	var b strings.Builder
	for _, r := range s {
		if c, ok := confusables[r]; ok {
			r = c
		}
		b.WriteString(strings.ToLower(string(r)))
	}
	out := b.String()
	for k, v := range map[string]string{"rn": "m", "vv": "w", "cl": "d"} {
		out = strings.ReplaceAll(out, k, v)
	}
	return out
}

// editDistance is the Levenshtein distance of a and b, or limit+1 once it exceeds limit.
func editDistance(a, b string, limit int) int {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d > limit || -d > limit {
		return limit + 1
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			best = min(best, cur[j])
		}
		if best > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
