package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpspec/mcpspec/session"
)

// ActiveOptions fences an active audit. Nothing is called without an allow-list.
type ActiveOptions struct {
	// Allow are globs (path.Match) over tool names; a tool is called only when one matches.
	Allow []string
	// AllowWrite lets the audit call tools not annotated readOnlyHint: true.
	AllowWrite bool
	// MaxCalls caps tools/call requests in all (0 = 200); MaxPerTool per tool (0 = 32).
	MaxCalls, MaxPerTool int
	// Timeout bounds each call (0 = 10s).
	Timeout time.Duration
	// Sandbox, when the server was spawned in one, enables the canary probes.
	Sandbox *Sandbox
	// Progress, when set, is told about each call before it is made ("call 3/40: read_file
	// (path traversal …)"); nil is silent.
	Progress func(step string)
}

func (o *ActiveOptions) orDefault() ActiveOptions {
	v := ActiveOptions{}
	if o != nil {
		v = *o
	}
	if v.MaxCalls <= 0 {
		v.MaxCalls = 200
	}
	if v.MaxPerTool <= 0 {
		v.MaxPerTool = 32
	}
	if v.Timeout <= 0 {
		v.Timeout = 10 * time.Second
	}
	return v
}

// ErrNoAllowList is returned by [PlanActive] and [Active] when ActiveOptions.Allow is empty.
var ErrNoAllowList = errors.New("active audit: no --allow-tools glob: nothing may be called")

// Probe is one planned tools/call.
type Probe struct {
	Tool string `json:"tool"`
	// Kind is the rule the probe serves (active-input-validation …).
	Kind string `json:"kind"`
	// What describes the payload.
	What string          `json:"what"`
	Args json.RawMessage `json:"arguments"`
	// expect is the proof looked for in the output ("" = none: judged by outcome).
	expect string
	param  string
}

// Plan is what an active audit will do: the probes in order, and the tools it leaves alone.
type Plan struct {
	Probes  []Probe       `json:"probes"`
	Skipped []SkippedTool `json:"skipped"`
}

// SkippedTool is a tool the plan does not call, and why.
type SkippedTool struct {
	Tool   string `json:"tool"`
	Reason string `json:"reason"`
}

// PlanActive decides the probes for m's tools under the fence of opts, without calling
// anything (--dry-run prints it).
func PlanActive(m *Metadata, opts *ActiveOptions) (*Plan, error) {
	o := opts.orDefault()
	if len(o.Allow) == 0 {
		return nil, ErrNoAllowList
	}
	plan := &Plan{Probes: []Probe{}, Skipped: []SkippedTool{}}
	total := 0
	tools := toolsOf(items(m))
	// A name listed twice is one tool on the wire: the server decides which definition runs.
	// Plan it once, and only if every definition allows the call (the least permissive wins).
	writes := map[string]bool{}
	defs := map[string]int{}
	for _, it := range tools {
		defs[it.subject.Name]++
		if !isTrue(toolAnnotations(it).readOnly) {
			writes[it.subject.Name] = true
		}
	}
	planned := map[string]bool{}
	for _, it := range tools {
		name := it.subject.Name
		if planned[name] {
			continue
		}
		planned[name] = true
		if !slices.ContainsFunc(o.Allow, func(g string) bool { ok, _ := path.Match(g, name); return ok }) {
			plan.Skipped = append(plan.Skipped, SkippedTool{name, "not matched by --allow-tools"})
			continue
		}
		if writes[name] && !o.AllowWrite {
			reason := "not annotated readOnlyHint: true (pass --allow-write to call it)"
			if defs[name] > 1 {
				reason = fmt.Sprintf("listed %d times and not every definition is annotated readOnlyHint: true (pass --allow-write to call it)", defs[name])
			}
			plan.Skipped = append(plan.Skipped, SkippedTool{name, reason})
			continue
		}
		probes := toolProbes(it, o.Sandbox)
		if len(probes) > o.MaxPerTool {
			probes = probes[:o.MaxPerTool]
		}
		if total+len(probes) > o.MaxCalls {
			probes = probes[:max(0, o.MaxCalls-total)]
			if len(probes) == 0 {
				plan.Skipped = append(plan.Skipped, SkippedTool{name, fmt.Sprintf("--max-calls %d reached", o.MaxCalls)})
				continue
			}
		}
		total += len(probes)
		plan.Probes = append(plan.Probes, probes...)
	}
	// Oversized inputs go last: a crash ends the session and every probe after it.
	slices.SortStableFunc(plan.Probes, func(a, b Probe) int {
		return boolInt(a.Kind == RuleExhaustion) - boolInt(b.Kind == RuleExhaustion)
	})
	return plan, nil
}

// schemaProps returns the input schema's properties, their order (sorted) and required names.
func schemaProps(it *item) (map[string]map[string]any, []string, []string, bool) {
	props := map[string]map[string]any{}
	var names []string
	pm, _ := at(it.value, "/inputSchema/properties")
	if m, ok := pm.(map[string]any); ok {
		for k, v := range m {
			if vm, ok := v.(map[string]any); ok {
				props[k] = vm
				names = append(names, k)
			}
		}
	}
	slices.Sort(names)
	var req []string
	rv, _ := at(it.value, "/inputSchema/required")
	if rs, ok := rv.([]any); ok {
		for _, r := range rs {
			if s, ok := r.(string); ok {
				req = append(req, s)
			}
		}
	}
	ap, _ := at(it.value, "/inputSchema/additionalProperties")
	closed := ap == false
	return props, names, req, closed
}

// typeOf returns a property schema's type (first of a list, "" when none).
func typeOf(p map[string]any) string {
	switch t := p["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				return s
			}
		}
	}
	return ""
}

// benign returns a harmless valid-looking value for a property schema.
func benign(p map[string]any) any {
	if d, ok := p["default"]; ok {
		return d
	}
	if e, ok := p["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	switch typeOf(p) {
	case "integer", "number":
		if mn, ok := p["minimum"]; ok {
			return mn
		}
		return 1
	case "boolean":
		return false
	case "array":
		return []any{}
	case "object":
		return map[string]any{}
	}
	return "mcpspec"
}

// baseArgs fills the required properties with benign values.
func baseArgs(props map[string]map[string]any, req []string) map[string]any {
	args := map[string]any{}
	for _, r := range req {
		if p, ok := props[r]; ok {
			args[r] = benign(p)
		} else {
			args[r] = "mcpspec"
		}
	}
	return args
}

var pathParam = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^(path|paths|file|filename|file_?path|filepath|dir|directory|folder|src|source|dest|destination|target|location|uri|url)$|path$|file$`)
})
var evalParam = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^(expr|expression|formula|code|command|cmd|script|query|sql|template|pattern|regex|js|javascript|python|program)$`)
})

// The evaluation payloads and the values that prove evaluation.
const (
	templatePayload = "{{1337*7331}} ${1337*7331} <%= 1337*7331 %> #{1337*7331} @(1337*7331)"
	templateProof   = "9801547"
)

// toolProbes plans the probes of one tool.
func toolProbes(it *item, sb *Sandbox) []Probe {
	name := it.subject.Name
	props, names, req, closed := schemaProps(it)
	base := baseArgs(props, req)
	var out []Probe
	add := func(kind, what string, args map[string]any, expect, param string) {
		b, err := canonicalValue(args)
		if err != nil {
			return
		}
		out = append(out, Probe{Tool: name, Kind: kind, What: what, Args: b, expect: expect, param: param})
	}
	with := func(k string, v any) map[string]any {
		a := map[string]any{}
		for kk, vv := range base {
			a[kk] = vv
		}
		a[k] = v
		return a
	}
	// Input validation: a wrong type, a missing required argument, an unknown argument.
	for _, n := range names {
		if t := typeOf(props[n]); t != "" {
			var wrong any = "mcpspec-not-a-" + t
			if t == "string" {
				wrong = 1337
			}
			add(RuleInputValidation, fmt.Sprintf("%s as a value that is not a %s", n, t), with(n, wrong), "", n)
			break
		}
	}
	if len(req) > 0 {
		add(RuleInputValidation, "no arguments although "+strings.Join(req, ", ")+" are required", map[string]any{}, "", "")
	}
	if closed {
		add(RuleInputValidation, "an unknown argument (additionalProperties: false)", with("mcpspec_unknown_argument", "x"), "", "")
	}
	// String parameters: containment (the first path parameter), evaluation, exhaustion.
	strs := 0
	paths := false
	exec := execFinding(it, it.str("description")) != nil
	for _, n := range names {
		if typeOf(props[n]) != "string" || props[n]["enum"] != nil {
			continue
		}
		if pathParam().MatchString(n) && sb != nil && !paths {
			paths = true
			rel := "../" + pathBase(sb.CanaryPath)
			add(RulePathTraversal, n+" = ../<canary> (outside the working directory)", with(n, rel), sb.CanaryNonce, n)
			add(RulePathTraversal, n+" = the canary's absolute path", with(n, sb.CanaryPath), sb.CanaryNonce, n)
			add(RulePathTraversal, n+" = ../../../../../../<canary's absolute path>", with(n, "../../../../../../.."+sb.CanaryPath), sb.CanaryNonce, n)
			for _, c := range sb.Roots {
				sib := pathBase(c.Sibling)
				add(RulePathTraversal, n+" = <root>_x/<canary> (a sibling whose name starts with the root's)", with(n, filepath.Join(c.Sibling, CanaryFile)), sb.CanaryNonce, n)
				if c.Link != "" {
					add(RulePathTraversal, n+" = <root>/<symlink out>/<canary>", with(n, filepath.Join(c.Link, CanaryFile)), sb.CanaryNonce, n)
					if c.Root == sb.Dir {
						add(RulePathTraversal, n+" = <symlink out>/<canary> (relative)", with(n, pathBase(c.Link)+"/"+CanaryFile), sb.CanaryNonce, n)
					}
				}
				add(RulePathTraversal, n+" = <root>/..%2f<root>_x%2f<canary> (encoded separators)", with(n, c.Root+"/..%2f"+sib+"%2f"+CanaryFile), sb.CanaryNonce, n)
				add(RulePathTraversal, n+` = <root>/..\<root>_x\<canary> (mixed separators)`, with(n, c.Root+`/..\`+sib+`\`+CanaryFile), sb.CanaryNonce, n)
			}
		}
		if !exec && !evalParam().MatchString(n) && strs < 3 {
			a, b := strings.ToUpper(nonce(3)), strings.ToUpper(nonce(3))
			add(RuleInjection, n+" = template expressions {{1337*7331}} …", with(n, templatePayload), templateProof, n)
			add(RuleInjection, n+" = shell substitutions $(printf %s%s A B) …",
				with(n, fmt.Sprintf("mcpspec; printf %%s%%s %s %s; $(printf %%s%%s %s %s) `printf %%s%%s %s %s`", a, b, a, b, a, b)), a+b, n)
			strs++
		}
	}
	for _, n := range names {
		if typeOf(props[n]) == "string" && props[n]["enum"] == nil {
			add(RuleExhaustion, n+" = a 1 MiB string", with(n, strings.Repeat("A", 1<<20)), "", n)
			break
		}
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func pathBase(p string) string {
	return p[strings.LastIndexAny(p, `/\`)+1:]
}

// Caller is what an active audit needs of a session; *session.Session implements it.
type Caller interface {
	CallTool(ctx context.Context, name string, args any, opts *session.CallOptions) (*session.ToolResult, error)
	ProtocolVersion() string
}

var _ Caller = (*session.Session)(nil)

// Active runs the planned probes against the server and returns the active findings: a tool
// that executed invalid arguments or crashed on them, a canary file read through a path, an
// evaluated template or command, a stack trace or the canary secret in an error, hidden or
// injected text in an output, and a bounded oversized input that crashed the server or missed
// the deadline. It stops at the first crash (the session is gone) and reports what it saw.
// Only proofs count: an echoed payload is never a finding.
func Active(ctx context.Context, c Caller, m *Metadata, opts *ActiveOptions) ([]Finding, *Plan, error) {
	o := opts.orDefault()
	plan, err := PlanActive(m, &o)
	if err != nil {
		return nil, nil, err
	}
	modern := c.ProtocolVersion() >= session.Version20251125
	var out []Finding
	seen := map[string]bool{}
	report := func(f Finding) {
		k := f.RuleID + "\x00" + f.Subject.Name
		if seen[k] {
			return
		}
		seen[k] = true
		out = append(out, f)
	}
	for i, p := range plan.Probes {
		if err := ctx.Err(); err != nil {
			return out, plan, err
		}
		if o.Progress != nil {
			o.Progress(fmt.Sprintf("call %d/%d: %s (%s)", i+1, len(plan.Probes), p.Tool, clip(p.What, 80)))
		}
		subj := Subject{Server: m.Name, Kind: KindTool, Name: p.Tool}
		res, err := c.CallTool(ctx, p.Tool, p.Args, &session.CallOptions{Timeout: o.Timeout})
		text := squeezeRuns(outputText(res, err))
		crashed := isGone(err)
		// Evidence is built on the masked output: no credential of the output is repeated.
		canary := ""
		if o.Sandbox != nil {
			canary = o.Sandbox.EnvSecret
		}
		secrets := findSecrets(text, canary)
		masked := maskSpans(text, secrets)
		if f := secretInOutput(subj, p, masked, secrets); f != nil {
			report(*f)
		}
		for _, f := range disclosure(subj, p, masked, o.Sandbox) {
			report(f)
		}
		if res != nil {
			for _, f := range poisoned(subj, p, masked) {
				report(f)
			}
		}
		switch p.Kind {
		case RuleInputValidation:
			if crashed || (err == nil && res != nil && !res.IsError) {
				report(validationFinding(subj, p, res, crashed, modern))
			}
		case RulePathTraversal, RuleInjection:
			if p.expect != "" && strings.Contains(text, p.expect) && !strings.Contains(string(p.Args), p.expect) {
				r, _ := RuleByID(p.Kind)
				i := strings.Index(text, p.expect)
				report(Finding{RuleID: r.ID, Severity: r.Severity, Confidence: Certain, Subject: subj, Fix: r.Fix,
					Message:  fmt.Sprintf("with %s the output contains %q, which the input did not", p.What, p.expect),
					Evidence: evidence("/output", text, i, i+len(p.expect), ""),
					Signals:  []Signal{{Kind: "probe", Text: clip(string(p.Args), 300)}, {Kind: "proof", Text: p.expect}}})
			}
		case RuleExhaustion:
			if crashed || session.CategoryOf(err) == session.Timeout || session.CategoryOf(err) == session.Hang {
				r, _ := RuleByID(p.Kind)
				report(Finding{RuleID: r.ID, Severity: r.Severity, Confidence: Firm, Subject: subj, Fix: r.Fix,
					Message: fmt.Sprintf("with %s the call failed: %v", p.What, clip(fmt.Sprint(err), 200)),
					Signals: []Signal{{Kind: "probe", Text: p.What}}})
			}
		}
		if crashed {
			if p.Kind != RuleInputValidation && p.Kind != RuleExhaustion {
				r, _ := RuleByID(RuleInputValidation)
				report(Finding{RuleID: r.ID, Severity: High, Confidence: Certain, Subject: subj, Fix: r.Fix,
					Message: fmt.Sprintf("the server went away on %s: %v", p.What, clip(fmt.Sprint(err), 200))})
			}
			return out, plan, nil
		}
	}
	return out, plan, nil
}

// isGone reports a session that ended (crash or disconnect).
func isGone(err error) bool {
	c := session.CategoryOf(err)
	return c == session.Crash || c == session.Disconnected
}

func validationFinding(subj Subject, p Probe, res *session.ToolResult, crashed, modern bool) Finding {
	r, _ := RuleByID(RuleInputValidation)
	want := "isError: true (2025-11-25 and later) or JSON-RPC error -32602"
	if !modern {
		want = "JSON-RPC error -32602 or isError: true"
	}
	f := Finding{RuleID: r.ID, Severity: r.Severity, Confidence: Certain, Subject: subj, Fix: r.Fix,
		Signals: []Signal{{Kind: "probe", Text: clip(string(p.Args), 300)}}}
	if crashed {
		f.Severity = High
		f.Message = fmt.Sprintf("the server crashed on %s", p.What)
	} else {
		f.Message = fmt.Sprintf("the tool executed with %s; want %s", p.What, want)
		if res != nil {
			t := outputText(res, nil)
			f.Evidence = evidence("/output", t, 0, min(len(t), 120), "")
		}
	}
	return f
}

// outputText joins a result's text content and structured content, or an error's message.
func outputText(res *session.ToolResult, err error) string {
	var b strings.Builder
	if err != nil {
		b.WriteString(err.Error())
		var se *session.Error
		if errors.As(err, &se) && len(se.Data) > 0 {
			b.WriteString("\n" + string(se.Data))
		}
	}
	if res != nil {
		for _, c := range res.Content {
			var item struct {
				Type     string `json:"type"`
				Text     string `json:"text"`
				Resource struct {
					Text string `json:"text"`
				} `json:"resource"`
			}
			if json.Unmarshal(c, &item) == nil {
				b.WriteString(item.Text)
				b.WriteString(item.Resource.Text)
				b.WriteByte('\n')
			}
		}
		if len(res.StructuredContent) > 0 {
			b.Write(res.StructuredContent)
		}
	}
	s := b.String()
	if len(s) > 1<<20 {
		s = s[:snap(s, 1<<20)]
	}
	return s
}

// stackTrace matches stack traces of common runtimes.
var stackTrace = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)(^\s+at [\w$.<>\[\] ]+ \(?(/|[A-Za-z]:\\|file://|node:)[^)\n]+:\d+:\d+\)?$|Traceback \(most recent call last\)|^goroutine \d+ \[[a-z ]+\]:|^\s+at [\w.$]+\([\w]+\.java:\d+\)|^\s+at [\w.]+\(.*\) in .+:line \d+|panic: .+\n\ngoroutine)`)
})

// disclosure looks for the env canary, known token formats and stack traces in an output.
func disclosure(subj Subject, p Probe, text string, sb *Sandbox) []Finding {
	r, _ := RuleByID(RuleDisclosure)
	if sb != nil && sb.EnvSecret != "" {
		if i := strings.Index(text, sb.EnvSecret); i >= 0 {
			return []Finding{{RuleID: r.ID, Severity: High, Confidence: Certain, Subject: subj, Fix: r.Fix,
				Message:  fmt.Sprintf("the output of %s contains the canary secret of the server's environment (%s)", p.What, sb.EnvName),
				Evidence: evidence("/output", text, i, i+len(sb.EnvSecret), ""),
				Signals:  []Signal{{Kind: "env-canary", Text: sb.EnvName}}}}
		}
	}
	if loc := stackTrace().FindStringIndex(text); loc != nil {
		return []Finding{{RuleID: r.ID, Severity: r.Severity, Confidence: Firm, Subject: subj, Fix: r.Fix,
			Message:  fmt.Sprintf("the output of %s contains a stack trace", p.What),
			Evidence: evidence("/output", text, loc[0], loc[1], ""),
			Signals:  []Signal{{Kind: "stack-trace", Text: clip(text[loc[0]:loc[1]], 160)}}}}
	}
	return nil
}

// poisoned applies the passive text rules to a tool's output.
func poisoned(subj Subject, p Probe, output string) []Finding {
	t := text{pointer: "/output", s: output}
	fs := hiddenFindings(subj, t)
	if f := directiveIn(subj, t); f != nil {
		fs = append(fs, *f)
	}
	var out []Finding
	r, _ := RuleByID(RuleOutputPoisoning)
	for _, f := range fs {
		out = append(out, Finding{RuleID: r.ID, Severity: max(f.Severity, r.Severity), Confidence: f.Confidence, Subject: subj, Fix: r.Fix,
			Message:  fmt.Sprintf("the output of %s: %s (%s)", p.What, f.Message, f.RuleID),
			Evidence: f.Evidence, Signals: f.Signals})
	}
	return out
}

// secretInOutput reports the credentials of a tool's output; masked is the output with them
// masked (see [maskSpans]), the only text the finding quotes.
func secretInOutput(subj Subject, p Probe, masked string, secrets []secretSpan) *Finding {
	if len(secrets) == 0 {
		return nil
	}
	r, _ := RuleByID(RuleOutputSecret)
	var sigs []Signal
	var whats []string
	for _, sp := range secrets {
		sigs = append(sigs, Signal{Kind: "credential", Text: sp.what, Pointer: "/output", Start: sp.start, End: sp.end})
		if !slices.Contains(whats, sp.what) {
			whats = append(whats, sp.what)
		}
	}
	first := secrets[0]
	return &Finding{RuleID: r.ID, Severity: r.Severity, Confidence: Firm, Subject: subj, Fix: r.Fix,
		Message:  fmt.Sprintf("the output of %s carries %d credential(s): %s (masked here)", p.What, len(secrets), strings.Join(whats, ", ")),
		Evidence: evidence("/output", masked, first.start, first.end, ""),
		Signals:  sigs}
}

// squeezeRuns shortens every run of one repeated byte longer than 1 KiB to its first 64 bytes
// and a note of its length. Such a run is an echo of a probe's own payload (a 1 MiB string sent
// back in an error message) or padding: it can hold no secret, directive or stack trace, yet
// the rules' regular expressions took seconds per call to scan it (server-filesystem echoes
// the 1 MiB path of eight probes). Everything around it is scanned as before.
func squeezeRuns(s string) string {
	const long, keep = 1024, 64
	var b strings.Builder
	last := 0 // s[:last] is written (or squeezed) already
	for i := 0; i < len(s); {
		j := i + 1
		for j < len(s) && s[j] == s[i] {
			j++
		}
		if j-i > long {
			if b.Len() == 0 {
				b.Grow(len(s) / 2)
			}
			b.WriteString(s[last : i+keep])
			fmt.Fprintf(&b, "…(%d× %q)…", j-i-keep, s[i])
			last = j
		}
		i = j
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}
