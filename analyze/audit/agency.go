package audit

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// words splits an identifier or sentence into lower-case words at non-alphanumerics and
// lower→upper case changes: "createOrUpdate_file" → create, or, update, file.
func words(s string) []string {
	var out []string
	var cur []rune
	prev := rune(0)
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && unicode.IsLower(prev) {
				flush()
			}
			cur = append(cur, r)
		default:
			flush()
		}
		prev = r
	}
	flush()
	return out
}

// Verb classes of tool names.
var (
	deleteVerbs = []string{"delete", "remove", "rm", "drop", "destroy", "purge", "erase", "wipe", "truncate", "kill", "terminate", "revoke", "uninstall", "unlink", "shred"}
	writeVerbs  = []string{"write", "overwrite", "create", "update", "upsert", "insert", "set", "put", "patch", "edit", "modify", "rename", "move", "mv",
		"send", "post", "publish", "push", "merge", "upload", "exec", "execute", "run", "eval", "deploy", "install", "commit", "fork", "close",
		"archive", "add", "append", "reset", "clear", "restart", "stop", "shutdown", "reboot", "transfer", "pay", "buy", "order", "submit",
		"approve", "assign", "invite", "grant", "enable", "disable", "toggle", "apply", "replace", "save", "store", "change", "schedule",
		"cancel", "reply", "comment", "react", "mutate", "chmod", "chown", "email", "mail", "tweet", "notify"}
	// strictWriteVerbs are unambiguous mutations: enough to contradict readOnlyHint: true
	// (unlike add, set, run or create, which pure functions use too: add two numbers).
	strictWriteVerbs = []string{"write", "overwrite", "update", "upsert", "insert", "patch", "edit", "modify", "rename", "move", "send",
		"post", "publish", "push", "merge", "upload", "exec", "execute", "deploy", "install", "commit", "email", "transfer", "pay", "submit", "chmod", "chown"}
	readVerbs = []string{"get", "list", "read", "search", "find", "fetch", "query", "describe", "show", "view", "open", "lookup", "browse",
		"inspect", "check", "count", "retrieve", "download", "scan", "load", "navigate", "echo", "ping", "explain", "summarize", "analyze",
		"validate", "preview", "screenshot", "geocode", "calculate", "compute", "convert", "resolve", "lint", "diff", "stat", "print"}
)

// nameVerb returns the first word of a tool name that is a known verb, and its class:
// "delete", "write" or "read" ("" when none is known). Namespace prefixes (slack_post_message)
// are skipped that way.
func nameVerb(name string) (verb, class string) {
	for _, w := range words(name) {
		switch {
		case slices.Contains(deleteVerbs, w):
			return w, "delete"
		case slices.Contains(writeVerbs, w):
			return w, "write"
		case slices.Contains(readVerbs, w):
			return w, "read"
		}
	}
	return "", ""
}

// annotations are a tool's behaviour hints; nil fields are absent.
type annotations struct {
	readOnly, destructive, idempotent, openWorld *bool
	present                                      bool
}

func toolAnnotations(it *item) annotations {
	var a annotations
	m, ok := it.obj()["annotations"].(map[string]any)
	if !ok {
		return a
	}
	a.present = true
	get := func(k string) *bool {
		if b, ok := m[k].(bool); ok {
			return &b
		}
		return nil
	}
	a.readOnly, a.destructive, a.idempotent, a.openWorld = get("readOnlyHint"), get("destructiveHint"), get("idempotentHint"), get("openWorldHint")
	return a
}

func isTrue(b *bool) bool  { return b != nil && *b }
func isFalse(b *bool) bool { return b != nil && !*b }

// readOnlyClaim matches descriptions that insist they only read, which outweighs a verb.
var readOnlyClaim = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\bread[- ]only\b|\b(does not|doesn't|never|without) (modify|modifying|change|changing|write|writing|alter|altering)\b`)
})

// mutatingOpening matches a description whose first sentence says the tool changes state.
var mutatingOpening = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^\s*(permanently\s+)?(deletes?|removes?|drops?|destroys?|purges?|erases?|wipes?|truncates?|kills?|overwrites?|writes?|sends?|posts?|publishes?|uploads?|executes?|runs?\s+(a\s+|an\s+|the\s+)?(shell|bash|system|arbitrary)?\s*(commands?|scripts?|code)|modifies|modify|transfers?|pays?)\b`)
})

// execName matches tool-name words that mean execution.
var execName = []string{"exec", "execute", "eval", "evaluate", "shell", "bash", "terminal", "cmd", "repl", "interpreter"}

// execText matches descriptions of executing code or commands.
var execText = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(execut(e|es|ing|ion)|run(s|ning)?|eval(uate|uates)?|spawn(s)?)\b[^.\n]{0,40}?\b(shell|bash|terminal|system|arbitrary|javascript|js|python|ruby|node|code|commands?|scripts?|programs?|binar(y|ies)|processes)\b`)
})

// execParams are parameter names that carry code when the tool executes.
var execParams = []string{"command", "cmd", "code", "script", "shell", "program", "expression", "js", "javascript", "python"}

// agencyFindings applies the annotation-first excessive-agency rules to one tool.
func agencyFindings(it *item) []Finding {
	var out []Finding
	name, desc := it.subject.Name, it.str("description")
	a := toolAnnotations(it)
	verb, class := nameVerb(name)
	opening := mutatingOpening().FindString(desc)
	claimsRO := readOnlyClaim().MatchString(desc)

	if isTrue(a.readOnly) {
		var sigs []Signal
		if class == "delete" || slices.Contains(strictWriteVerbs, verb) {
			sigs = append(sigs, Signal{Kind: "mutating-name", Text: verb, Pointer: "/name", Start: strings.Index(strings.ToLower(name), verb), End: strings.Index(strings.ToLower(name), verb) + len(verb)})
		}
		if opening != "" && !claimsRO {
			sigs = append(sigs, Signal{Kind: "mutating-description", Text: strings.TrimSpace(opening), Pointer: "/description", Start: 0, End: len(opening)})
		}
		if !claimsRO {
			if loc := execText().FindStringIndex(desc); loc != nil && opening == "" {
				sigs = append(sigs, Signal{Kind: "executes", Text: desc[loc[0]:loc[1]], Pointer: "/description", Start: loc[0], End: loc[1]})
			}
		}
		if isTrue(a.destructive) {
			sigs = append(sigs, Signal{Kind: "destructive-hint", Text: "destructiveHint: true", Pointer: "/annotations/destructiveHint"})
		}
		// A read-only claim in the description explains a write-ish verb ("run a read-only query").
		if len(sigs) > 0 && !(claimsRO && !isTrue(a.destructive) && class != "delete") {
			r, _ := RuleByID(RuleReadOnlyMismatch)
			conf := Firm
			if len(sigs) > 1 || isTrue(a.destructive) {
				conf = Certain
			}
			f := Finding{RuleID: r.ID, Severity: r.Severity, Confidence: conf, Subject: it.subject, Signals: sigs, Fix: r.Fix,
				Message: fmt.Sprintf("annotated readOnlyHint: true, but %s", describeSignals(sigs))}
			f.Evidence = annotationEvidence(it, "readOnlyHint")
			out = append(out, f)
		}
	}

	// The specification's default for destructiveHint is true (for a tool that is not
	// read-only): a delete tool without the annotation is already treated as destructive. Only
	// an explicit destructiveHint: false contradicts the name.
	if class == "delete" && isFalse(a.destructive) && !isTrue(a.readOnly) {
		r, _ := RuleByID(RuleDestructive)
		out = append(out, Finding{RuleID: r.ID, Severity: r.Severity, Subject: it.subject, Fix: r.Fix, Confidence: Certain,
			Signals:  []Signal{{Kind: "delete-verb", Text: verb, Pointer: "/name"}},
			Message:  fmt.Sprintf("the name says %q but the tool declares destructiveHint: false", verb),
			Evidence: annotationEvidence(it, "destructiveHint")})
	}

	if f := execFinding(it, desc); f != nil {
		out = append(out, *f)
	}
	return out
}

// execFinding reports tools that execute code or commands (informational).
func execFinding(it *item, desc string) *Finding {
	var sigs []Signal
	for _, w := range words(it.subject.Name) {
		if slices.Contains(execName, w) {
			sigs = append(sigs, Signal{Kind: "exec-name", Text: w, Pointer: "/name"})
			break
		}
	}
	if loc := execText().FindStringIndex(desc); loc != nil {
		sigs = append(sigs, Signal{Kind: "exec-description", Text: desc[loc[0]:loc[1]], Pointer: "/description", Start: loc[0], End: loc[1]})
	}
	if len(sigs) > 0 {
		props, _ := at(it.value, "/inputSchema/properties")
		if pm, ok := props.(map[string]any); ok {
			for _, p := range execParams {
				if _, ok := pm[p]; ok {
					sigs = append(sigs, Signal{Kind: "code-parameter", Text: p, Pointer: "/inputSchema/properties/" + p})
					break
				}
			}
		}
	}
	if len(sigs) == 0 {
		return nil
	}
	r, _ := RuleByID(RuleExec)
	conf := Tentative
	if len(sigs) > 1 {
		conf = Firm
	}
	f := &Finding{RuleID: r.ID, Severity: r.Severity, Confidence: conf, Subject: it.subject, Signals: sigs, Fix: r.Fix,
		Message: "the tool executes code or commands: " + describeSignals(sigs)}
	if sigs[0].Pointer == "/description" {
		f.Evidence = evidence("/description", desc, sigs[0].Start, sigs[0].End, "")
	} else {
		f.Evidence = evidence("/name", it.subject.Name, 0, len(it.subject.Name), "")
	}
	return f
}

// annotationEvidence points at an annotation of the tool.
func annotationEvidence(it *item, key string) *Evidence {
	ann, _ := it.obj()["annotations"].(map[string]any)
	v := fmt.Sprint(ann[key])
	s := visible(key + ": " + v)
	return &Evidence{Pointer: "/annotations/" + key, Excerpt: s, Start: 0, End: len(s)}
}

// describeSignals renders signals for a message: `the name starts with "delete"`, ….
func describeSignals(sigs []Signal) string {
	var parts []string
	for _, s := range sigs {
		switch s.Kind {
		case "mutating-name":
			parts = append(parts, fmt.Sprintf("its name says %q", s.Text))
		case "mutating-description":
			parts = append(parts, fmt.Sprintf("its description opens with %q", s.Text))
		case "destructive-hint":
			parts = append(parts, "it is also annotated destructiveHint: true")
		case "exec-name":
			parts = append(parts, fmt.Sprintf("name word %q", s.Text))
		case "exec-description":
			parts = append(parts, fmt.Sprintf("description %q", clip(s.Text, 80)))
		case "executes":
			parts = append(parts, fmt.Sprintf("its description says it executes: %q", clip(s.Text, 80)))
		case "code-parameter":
			parts = append(parts, fmt.Sprintf("parameter %q", s.Text))
		default:
			parts = append(parts, fmt.Sprintf("%s %q", s.Kind, clip(s.Text, 80)))
		}
	}
	return strings.Join(parts, ", ")
}
