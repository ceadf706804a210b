package audit

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// PassiveAudit runs every enabled passive rule over m and returns the findings, sorted by
// severity (highest first), then subject and rule. It reads the metadata only: no tool is
// called, nothing is fetched. rules may be nil (every rule); rules.Others adds the metadata of
// servers audited alongside for the cross-server rules. Drift needs a lockfile: see [Drift].
// Every rule loop polls ctx: a cancelled audit returns ctx's error and no findings.
func PassiveAudit(ctx context.Context, m *Metadata, rules *Rules) ([]Finding, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	its := items(m)
	var out []Finding
	add := func(f *Finding) {
		if f != nil && rules.Enabled(f.RuleID) {
			out = append(out, *f)
		}
	}
	clean := map[string]bool{}
	for _, it := range its {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for _, f := range textFindings(it, clean) {
			add(&f)
		}
		if it.subject.Kind == KindTool && it.bad == nil {
			for _, f := range agencyFindings(it) {
				add(&f)
			}
		}
	}
	conf, err := conformanceFindings(ctx, its)
	if err != nil {
		return nil, err
	}
	for _, f := range conf {
		add(&f)
	}
	var others [][]*item
	if rules != nil {
		for _, o := range rules.Others {
			if o != nil && o != m {
				others = append(others, items(o))
			}
		}
	}
	shadows, err := shadowFindings(ctx, its, others)
	if err != nil {
		return nil, err
	}
	for _, f := range shadows {
		add(&f)
	}
	collisions, err := collisionFindings(ctx, its, others)
	if err != nil {
		return nil, err
	}
	for _, f := range collisions {
		add(&f)
	}
	f, err := toxicFlow(ctx, m.Name, its, others)
	if err != nil {
		return nil, err
	}
	add(f)
	SortFindings(out)
	return out, nil
}

// SortFindings orders findings by severity (highest first), then server, subject kind and
// name, rule id and evidence pointer, so every output is stable.
func SortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		if a.Severity != b.Severity {
			return int(b.Severity) - int(a.Severity)
		}
		for _, c := range [][2]string{
			{a.Subject.Server, b.Subject.Server}, {string(a.Subject.Kind), string(b.Subject.Kind)},
			{a.Subject.Name, b.Subject.Name}, {a.RuleID, b.RuleID}, {ptrOf(a.Evidence), ptrOf(b.Evidence)},
		} {
			if n := strings.Compare(c[0], c[1]); n != 0 {
				return n
			}
		}
		return 0
	})
}

func ptrOf(e *Evidence) string {
	if e == nil {
		return ""
	}
	return e.Pointer
}

// textFindings applies the character rules, the directive rules and the secret rules to every
// string of the entry. clean remembers the strings (with what the rules read besides the
// string: key or value, schema, context, the pointer's last token) that raised nothing, so the
// keys and values every tool repeats are scanned once per audit.
func textFindings(it *item, clean map[string]bool) []Finding {
	var texts []text
	if s, ok := it.value.(string); ok && it.subject.Kind == KindInstructions {
		texts = []text{{pointer: "", s: s}}
	} else {
		texts = it.texts()
	}
	var out []Finding
	for _, t := range texts {
		k := t.cacheKey()
		if clean[k] {
			continue
		}
		n := len(out)
		out = append(out, hiddenFindings(it.subject, t)...)
		if f := directiveIn(it.subject, t); f != nil {
			out = append(out, *f)
		}
		out = append(out, secretFindings(it.subject, t)...)
		if len(out) == n && clean != nil {
			clean[k] = true
		}
	}
	return out
}

// cacheKey identifies t for the text rules: the string and everything else they read of it.
func (t text) cacheKey() string {
	last := t.pointer[strings.LastIndexByte(t.pointer, '/')+1:]
	schema := strings.HasPrefix(t.pointer, "/inputSchema") || strings.HasPrefix(t.pointer, "/outputSchema")
	icons := strings.Contains(t.pointer, "/icons/")
	return fmt.Sprintf("%t|%t|%t|%t|%q|%q|%s", t.key, t.schema, schema, icons, last, t.context, t.s)
}

// hiddenFindings reports the hidden and control characters of one string, one finding per rule
// and string (the first run as evidence, every run as a signal).
func hiddenFindings(subj Subject, t text) []Finding {
	hits := scanHidden(t.s)
	if len(hits) == 0 {
		return nil
	}
	var out []Finding
	byRule := map[string][]hiddenHit{}
	var order []string
	for _, h := range hits {
		if _, ok := byRule[h.rule]; !ok {
			order = append(order, h.rule)
		}
		byRule[h.rule] = append(byRule[h.rule], h)
	}
	where := "the string at " + pointerOr(t.pointer)
	if t.key {
		where = "the key at " + t.pointer
	}
	for _, id := range order {
		hs := byRule[id]
		r, _ := RuleByID(id)
		first := hs[0]
		var sigs []Signal
		var decoded []string
		for _, h := range hs {
			sigs = append(sigs, Signal{Kind: id, Text: h.what, Pointer: t.pointer, Start: h.start, End: h.end})
			if h.decoded != "" {
				decoded = append(decoded, h.decoded)
			}
		}
		f := Finding{RuleID: id, Severity: r.Severity, Confidence: Certain, Subject: subj, Signals: sigs, Fix: r.Fix,
			Evidence: evidence(t.pointer, t.s, first.start, first.end, strings.Join(decoded, " ")),
			Message:  fmt.Sprintf("%s contains %s", where, first.what)}
		if len(hs) > 1 {
			f.Message += fmt.Sprintf(" (and %d more runs)", len(hs)-1)
		}
		if len(decoded) > 0 {
			f.Message += fmt.Sprintf(" hiding %q", clip(strings.Join(decoded, " "), 200))
			// The hidden text itself may be an injection: that makes it critical.
			for _, d := range decoded {
				if c := bestCluster(signalsIn(d, "hidden", false), "hidden"); len(c.kinds) >= 1 {
					f.Severity = Critical
					for _, s := range c.signals {
						f.Signals = append(f.Signals, Signal{Kind: "hidden-" + s.Kind, Text: s.Text, Pointer: t.pointer, Start: first.start, End: first.end})
					}
					break
				}
			}
		}
		if id == RuleInvisible && allSoftHyphens(hs, t.s) {
			f.Severity, f.Confidence = Low, Tentative
		}
		out = append(out, f)
	}
	return out
}

// allSoftHyphens reports runs made of soft hyphens only (typography more often than hiding).
func allSoftHyphens(hs []hiddenHit, s string) bool {
	for _, h := range hs {
		if strings.Trim(s[h.start:h.end], "\u00ad") != "" {
			return false
		}
	}
	return true
}

// directiveIn runs the directive detector on one string: directive-injection for descriptions
// and texts, schema-injection for strings inside a schema. Keys other than schema property
// names, URIs and MIME types are not read for directives.
func directiveIn(subj Subject, t text) *Finding {
	if t.key && !t.schema {
		return nil
	}
	last := t.pointer[strings.LastIndexByte(t.pointer, '/')+1:]
	switch last {
	case "uri", "uriTemplate", "mimeType", "type", "format", "$schema", "$ref", "pattern", "src":
		return nil
	}
	inSchema := strings.HasPrefix(t.pointer, "/inputSchema") || strings.HasPrefix(t.pointer, "/outputSchema")
	sigs := signalsIn(t.s, t.pointer, t.key)
	if len(sigs) == 0 {
		return nil
	}
	if inSchema && t.context != "" && !t.key {
		// The property's name is read with its description, default and enum values.
		sigs = append(sigs, signalsIn(t.context, t.pointer+"#name", true)...)
	}
	rule := RuleDirective
	if inSchema {
		rule = RuleSchemaInjection
		t.schema = true
	}
	return directiveFinding(rule, subj, t, sigs)
}
