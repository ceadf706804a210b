package audit

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

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
var allTools = regexp.MustCompile(`(?i)\b(all|any|every|each)\s+(other\s+)?(tools?|functions?|servers?)\b[^.\n]{0,30}\b(must|should|shall|will|need to|are required to)\b[^.\n]{0,20}\b(first|always|also|never|include|send|call|use)\b|\bbefore (calling|using|invoking) (any|every|each) (other )?(tool|function)`)

// shadowFindings reports descriptions of the audited server's tools (and prompts) that rewrite
// another tool's behaviour: another server's tool, or a sibling named with rewriting language.
func shadowFindings(its []*item, others [][]*item) []Finding {
	type target struct {
		name    string
		subject Subject
		foreign bool
	}
	var targets []target
	for _, t := range toolsOf(its) {
		targets = append(targets, target{t.subject.Name, t.subject, false})
	}
	for _, o := range others {
		for _, t := range toolsOf(o) {
			targets = append(targets, target{t.subject.Name, t.subject, true})
		}
	}
	r, _ := RuleByID(RuleShadowing)
	var out []Finding
	for _, it := range its {
		if it.bad != nil || (it.subject.Kind != KindTool && it.subject.Kind != KindPrompt) {
			continue
		}
		desc := it.str("description")
		if desc == "" {
			continue
		}
		var sigs []Signal
		var related []Subject
		for _, tg := range targets {
			if tg.subject == it.subject || len(tg.name) < 3 {
				continue
			}
			re, err := regexp.Compile(strings.ReplaceAll(rewriteNear, "TOOL", regexp.QuoteMeta(tg.name)))
			if err != nil {
				continue
			}
			if loc := re.FindStringIndex(desc); loc != nil {
				sigs = append(sigs, Signal{Kind: "rewrites-" + map[bool]string{true: "foreign-tool", false: "sibling-tool"}[tg.foreign], Text: desc[loc[0]:loc[1]], Pointer: "/description", Start: loc[0], End: loc[1]})
				related = append(related, tg.subject)
			} else if tg.foreign && mentions(desc, tg.name) && len(signalsIn(desc, "/description", false)) > 0 {
				// Naming another server's tool alongside any directive signal is shadowing too.
				i := strings.Index(desc, tg.name)
				sigs = append(sigs, Signal{Kind: "names-foreign-tool", Text: tg.name, Pointer: "/description", Start: i, End: i + len(tg.name)})
				related = append(related, tg.subject)
			}
		}
		if loc := allTools.FindStringIndex(desc); loc != nil {
			sigs = append(sigs, Signal{Kind: "rewrites-all-tools", Text: desc[loc[0]:loc[1]], Pointer: "/description", Start: loc[0], End: loc[1]})
		}
		if len(sigs) == 0 {
			continue
		}
		conf := Firm
		if len(related) > 0 && slices.ContainsFunc(sigs, func(s Signal) bool { return strings.Contains(s.Kind, "foreign") }) {
			conf = Certain
		}
		var names []string
		for _, rs := range related {
			if rs.Server != it.subject.Server {
				names = append(names, rs.Name+" of "+rs.Server)
			} else {
				names = append(names, rs.Name)
			}
		}
		msg := "the description gives instructions about other tools"
		if len(names) > 0 {
			msg = fmt.Sprintf("the description rewrites the behaviour of %s", strings.Join(names, ", "))
		}
		out = append(out, Finding{RuleID: r.ID, Severity: r.Severity, Confidence: conf, Subject: it.subject, Signals: sigs, Related: related,
			Message: msg, Fix: r.Fix, Evidence: evidence("/description", desc, sigs[0].Start, sigs[0].End, "")})
	}
	return out
}

// mentions reports whether name occurs in s as a whole word.
func mentions(s, name string) bool {
	re, err := regexp.Compile(`(^|[^\w-])` + regexp.QuoteMeta(name) + `($|[^\w-])`)
	return err == nil && re.MatchString(s)
}

// collisionFindings reports the audited server's tools whose names equal, or are confusable
// with, a tool of another audited server.
func collisionFindings(its []*item, others [][]*item) []Finding {
	var out []Finding
	rc, _ := RuleByID(RuleNameCollision)
	rn, _ := RuleByID(RuleNameConfusable)
	for _, t := range toolsOf(its) {
		for _, o := range others {
			for _, u := range toolsOf(o) {
				a, b := t.subject.Name, u.subject.Name
				switch {
				case a == b:
					out = append(out, Finding{RuleID: rc.ID, Severity: rc.Severity, Confidence: Certain, Subject: t.subject, Related: []Subject{u.subject},
						Message:  fmt.Sprintf("%s also exposes a tool named %q", u.subject.Server, b),
						Evidence: evidence("/name", a, 0, len(a), ""), Fix: rc.Fix,
						Signals: []Signal{{Kind: "same-name", Text: b}}})
				case confusable(a, b):
					out = append(out, Finding{RuleID: rn.ID, Severity: rn.Severity, Confidence: Firm, Subject: t.subject, Related: []Subject{u.subject},
						Message:  fmt.Sprintf("%q is confusable with %q of %s", a, b, u.subject.Server),
						Evidence: evidence("/name", a, 0, len(a), ""), Fix: rn.Fix,
						Signals: []Signal{{Kind: "near-miss", Text: b}}})
				}
			}
		}
	}
	return out
}

// confusable reports names equal after folding look-alikes, or within one edit (two for names
// of 12 characters or more) when both are at least 5 characters long.
func confusable(a, b string) bool {
	if skeleton(a) == skeleton(b) {
		return true
	}
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
