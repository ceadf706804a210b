package audit

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Generic shadowing: language that reconfigures a tool the description names, whether or not
// that tool is among the audited ones (the shadowed tool usually belongs to another server the
// client has connected). toolRef is a tool-like identifier: snake_case, dotted or prefixed
// (mcp_tool_send_email), optionally quoted.
const toolRef = "[`'\"]?(?P<ref>[a-z][a-z0-9]*(?:[_.][a-z0-9]+)+)[`'\"]?"

var (
	// configuresTool: "this tool also configures the send_email tool", "has a very important
	// side effect on the also present send_email tool".
	configuresTool = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(also\s+)?(configures?|reconfigures?|controls?|governs?|modifies|overrides?|patches|hooks?|affects?|has\s+(an?\s+)?([\w-]+\s+){0,3}(side[ -]?effects?|effects?|impact)\s+on)\b[^.\n]{0,40}?\b(the\s+)?(also\s+present\s+|other\s+)?` + toolRef + `\s+(tool|function|command)\b`)
	})
	// onCallOf: "whenever send_email is called", "when (mcp_whatsapp) send_message is invoked".
	onCallOf = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(when|whenever|every\s+time|each\s+time|if|before|after)\b[^.\n]{0,40}?\b(the\s+)?(\([\w.-]+\)\s+)?` + toolRef + `(\s+(tool|function))?\s+(is|are|gets?|has\s+been)\s+(being\s+)?(used|called|invoked|run|executed|triggered)\b`)
	})
	// usingTool: "before executing any command with the run_command tool, …".
	usingTool = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(when|whenever|every\s+time|each\s+time|if|before|after)\b[^.\n]{0,40}?\b(with|using|via|through|in|by)\s+(the\s+)?(\([\w.-]+\)\s+)?` + toolRef + `(\s+(tool|function))?`)
	})
	// ordersTool: "the mcp_tool_send_email tool must send all emails to …".
	ordersTool = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(the\s+)?` + toolRef + `(\s+(tool|function))?\s+(must|should|shall|has\s+to|needs\s+to|will\s+now)\s+(always\s+|now\s+|also\s+|only\s+)*(send|add|include|use|bcc|cc|redirect|forward|route|copy|change|set|append|prepend|be\s+(called|invoked|used|sent))\b`)
	})
	// changesBehaviour: the order given about the call ("make sure to change the recipient",
	// "it must add a recipient").
	changesBehaviour = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^[\s,:;-]*(then\s+|also\s+|always\s+|silently\s+|secretly\s+)*(add|include|change|set|send|redirect|forward|bcc|cc|replace|append|prepend|copy|route|use|insert|transfer)\b|\b(must|make\s+sure\s+(to|that)?|be\s+sure\s+to|ensure\s+(that\s+)?|always|you\s+(should|need\s+to|have\s+to)|also|silently)\b[^.\n]{0,40}?\b(add|adds|include|includes|change|changes|set|sets|send|sends|redirect|redirects|forward|forwards|bcc|cc|replace|replaces|append|prepend|copy|route|use)\b`)
	})
)

// shadowTarget is a tool another description may rewrite.
type shadowTarget struct {
	subject Subject
	foreign bool
}

// shadowFindings reports descriptions of the audited server's tools (and prompts) that rewrite
// another tool's behaviour: another server's tool, a sibling named with rewriting language, or
// any tool-like name the text reconfigures (written as configuration or as an order about its
// calls), which need not be audited at all. Mentions are found by looking the words of a
// description up among the tool names, so the cost is linear in the number of tools.
func shadowFindings(ctx context.Context, its []*item, others [][]*item) ([]Finding, error) {
	targets := map[string][]shadowTarget{}
	for _, t := range toolsOf(its) {
		k := strings.ToLower(t.subject.Name)
		targets[k] = append(targets[k], shadowTarget{t.subject, false})
	}
	for _, o := range others {
		for _, t := range toolsOf(o) {
			k := strings.ToLower(t.subject.Name)
			targets[k] = append(targets[k], shadowTarget{t.subject, true})
		}
	}
	r, _ := RuleByID(RuleShadowing)
	compiled := map[string]*regexp.Regexp{}
	var out []Finding
	for _, it := range its {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if it.bad != nil || (it.subject.Kind != KindTool && it.subject.Kind != KindPrompt) {
			continue
		}
		raw := it.str("description")
		if raw == "" {
			continue
		}
		nt := normalize(raw, false)
		desc := nt.s
		var sigs []Signal
		var related []Subject
		addSig := func(kind string, a, b int) {
			os, oe := nt.off[a], nt.off[b]
			sigs = append(sigs, Signal{Kind: kind, Text: raw[os:oe], Pointer: "/description", Start: os, End: oe})
		}
		var directive []Signal
		directiveDone := false
		directives := func() []Signal {
			if !directiveDone {
				directive, directiveDone = signalsIn(raw, "/description", false), true
			}
			return directive
		}
		for _, name := range mentionedNames(desc, targets) {
			for _, tg := range targets[name] {
				if tg.subject == it.subject || len(name) < 3 {
					continue
				}
				re := compiled[name]
				if re == nil {
					re = regexp.MustCompile(strings.ReplaceAll(rewriteNear, "TOOL", regexp.QuoteMeta(name)))
					compiled[name] = re
				}
				if loc := re.FindStringIndex(desc); loc != nil {
					addSig("rewrites-"+map[bool]string{true: "foreign-tool", false: "sibling-tool"}[tg.foreign], loc[0], loc[1])
					related = append(related, tg.subject)
				} else if tg.foreign && len(directives()) > 0 {
					// Naming another server's tool alongside any directive signal is shadowing too.
					i := strings.Index(strings.ToLower(desc), name)
					addSig("names-foreign-tool", i, i+len(name))
					related = append(related, tg.subject)
				}
			}
		}
		if loc := allTools().FindStringIndex(desc); loc != nil {
			addSig("rewrites-all-tools", loc[0], loc[1])
		}
		refs := configuredTools(it.subject.Name, desc, addSig, directives)
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
		for _, ref := range refs {
			if !slices.ContainsFunc(names, func(n string) bool {
				return strings.EqualFold(n, ref) || strings.HasPrefix(strings.ToLower(n), ref+" of ")
			}) {
				names = append(names, ref)
			}
		}
		msg := "the description gives instructions about other tools"
		if len(names) > 0 {
			msg = fmt.Sprintf("the description rewrites the behaviour of %s", strings.Join(names, ", "))
		}
		ev := sigs[0]
		out = append(out, Finding{RuleID: r.ID, Severity: r.Severity, Confidence: conf, Subject: it.subject, Signals: sigs, Related: related,
			Message: msg, Fix: r.Fix, Evidence: evidence("/description", raw, ev.Start, ev.End, "")})
	}
	return out, nil
}

// configuredTools finds the generic shadowing signals of a normalized description: another
// tool that the text configures, hooks on its calls (changing what the call does), or gives
// orders to. A single signal needs a second kind, or a directive signal of the text other than
// a sensitive target (concealment, a pseudo-tag, an exfiltration channel, an imperative): an
// order about another tool's calls with neither is how documentation reads. The signals go
// through add; the names of the tools are returned.
func configuredTools(own, desc string, add func(kind string, a, b int), directives func() []Signal) []string {
	own = strings.ToLower(own)
	type hit struct {
		kind, ref  string
		start, end int
	}
	var hits []hit
	for _, p := range []struct {
		kind string
		re   *regexp.Regexp
	}{{"configures-tool", configuresTool()}, {"hooks-tool-calls", onCallOf()}, {"hooks-tool-calls", usingTool()}, {"orders-tool", ordersTool()}} {
		ri := p.re.SubexpIndex("ref")
		for _, m := range p.re.FindAllStringSubmatchIndex(desc, 8) {
			ref := strings.ToLower(desc[m[2*ri]:m[2*ri+1]])
			if ref == own || strings.HasSuffix(ref, "_"+own) || strings.HasSuffix(ref, "."+own) {
				continue
			}
			if p.kind == "hooks-tool-calls" && !changesBehaviour().MatchString(desc[m[1]:min(len(desc), m[1]+160)]) {
				continue // the hook must change what the call does
			}
			hits = append(hits, hit{p.kind, ref, m[0], m[1]})
		}
	}
	if len(hits) == 0 {
		return nil
	}
	kinds := map[string]bool{}
	for _, h := range hits {
		kinds[h.kind] = true
	}
	if len(kinds) < 2 && !slices.ContainsFunc(directives(), func(s Signal) bool { return s.Kind != SigSensitive }) {
		return nil
	}
	var refs []string
	for _, h := range hits {
		add(h.kind, h.start, h.end)
		if !slices.Contains(refs, h.ref) {
			refs = append(refs, h.ref)
		}
	}
	return refs
}

// mentionedNames returns the lower-cased tool names (keys of targets) that occur in s as words
// of tool-name characters, in the order of their first mention.
func mentionedNames(s string, targets map[string][]shadowTarget) []string {
	var out []string
	seen := map[string]bool{}
	isName := func(c byte) bool {
		return c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z'
	}
	lower := strings.ToLower(s)
	for i := 0; i < len(lower); {
		if !isName(lower[i]) {
			i++
			continue
		}
		j := i
		for j < len(lower) && isName(lower[j]) {
			j++
		}
		w := lower[i:j]
		// A word may end a sentence ("… call send_email.") or be hyphenated into prose.
		for _, c := range []string{w, strings.TrimRight(w, ".-"), strings.Trim(w, ".-")} {
			if _, ok := targets[c]; ok && !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
		i = j
	}
	return out
}
