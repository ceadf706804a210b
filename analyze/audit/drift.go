package audit

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Change is one field-level difference between a pinned definition and the current one.
type Change struct {
	// Pointer is the JSON pointer of the field within the definition.
	Pointer string `json:"pointer"`
	// Old and New are compact JSON excerpts ("" when the field was added or removed).
	Old string `json:"old,omitempty"`
	New string `json:"new,omitempty"`
}

// String renders `/description: "a" → "b"`.
func (c Change) String() string {
	switch {
	case c.Old == "":
		return fmt.Sprintf("%s: added %s", pointerOr(c.Pointer), c.New)
	case c.New == "":
		return fmt.Sprintf("%s: removed (was %s)", pointerOr(c.Pointer), c.Old)
	}
	return fmt.Sprintf("%s: %s → %s", pointerOr(c.Pointer), c.Old, c.New)
}

// maxChanges bounds the changes listed per definition.
const maxChanges = 20

// diffValues lists the field-level differences between a and b.
func diffValues(a, b any, ptr string, out *[]Change) {
	if len(*out) >= maxChanges {
		return
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		names := make([]string, 0, len(keys))
		for k := range keys {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			av, ina := am[k]
			bv, inb := bm[k]
			p := ptr + "/" + escapePointer(k)
			switch {
			case !ina:
				*out = append(*out, Change{Pointer: p, New: excerptJSON(bv)})
			case !inb:
				*out = append(*out, Change{Pointer: p, Old: excerptJSON(av)})
			default:
				diffValues(av, bv, p, out)
			}
		}
		return
	}
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok && bok && len(as) == len(bs) {
		for i := range as {
			diffValues(as[i], bs[i], fmt.Sprintf("%s/%d", ptr, i), out)
		}
		return
	}
	if ea, eb := compactJSON(a), compactJSON(b); ea != eb {
		*out = append(*out, Change{Pointer: ptr, Old: clip(visible(ea), 160), New: clip(visible(eb), 160)})
	}
}

func excerptJSON(v any) string { return clip(visible(compactJSON(v)), 160) }

// Drift compares m with its server's entry in the lock and reports tools added, removed,
// renamed (same definition under a new name) and changed (field by field), and changed
// instructions, prompts, resources and templates. A lock without the server reports nothing:
// there is nothing to compare with (the CLI says so).
func Drift(lock *Lock, m *Metadata) []Finding {
	if lock == nil || lock.Servers[m.Name] == nil {
		return nil
	}
	old := lock.Servers[m.Name]
	cur := LockServer(m)
	var out []Finding
	subj := func(k Kind, name string) Subject { return Subject{Server: m.Name, Kind: k, Name: name} }

	if !sameEntry(old.Instructions, cur.Instructions) {
		out = append(out, driftChanged(RuleDriftOther, subj(KindInstructions, ""), old.Instructions, cur.Instructions, "the server instructions changed"))
	}
	for _, k := range []Kind{KindTool, KindPrompt, KindResource, KindTemplate} {
		o, c := old.entries(k), cur.entries(k)
		var removed, added []string
		for _, n := range sortedKeys(o) {
			if _, ok := c[n]; !ok {
				removed = append(removed, n)
			}
		}
		for _, n := range sortedKeys(c) {
			ce := c[n]
			oe, ok := o[n]
			switch {
			case !ok:
				added = append(added, n)
			case oe.SHA256 != ce.SHA256:
				out = append(out, changedFinding(k, subj(k, n), oe, ce))
			}
		}
		// Renames: a removed and an added entry equal but for their name and title.
		for _, r := range slices.Clone(removed) {
			for _, a := range slices.Clone(added) {
				if k != KindTool || !sameButName(o[r], c[a]) {
					continue
				}
				rr, _ := RuleByID(RuleDriftRenamed)
				out = append(out, Finding{RuleID: rr.ID, Severity: rr.Severity, Confidence: Certain, Subject: subj(k, a), Fix: rr.Fix,
					Related: []Subject{subj(k, r)}, Message: fmt.Sprintf("tool %q was renamed to %q (same definition otherwise)", r, a),
					Signals: []Signal{{Kind: "renamed", Text: r + " → " + a, Pointer: "/name"}}})
				removed = slices.DeleteFunc(removed, func(s string) bool { return s == r })
				added = slices.DeleteFunc(added, func(s string) bool { return s == a })
				break
			}
		}
		for _, n := range added {
			if k == KindTool {
				ra, _ := RuleByID(RuleDriftAdded)
				out = append(out, Finding{RuleID: ra.ID, Severity: ra.Severity, Confidence: Certain, Subject: subj(k, n), Fix: ra.Fix,
					Message: fmt.Sprintf("tool %q is not in the lockfile", n)})
			} else {
				out = append(out, driftOther(subj(k, n), fmt.Sprintf("%s %q is new since the lockfile", k, n), Low))
			}
		}
		for _, n := range removed {
			if k == KindTool {
				rm, _ := RuleByID(RuleDriftRemoved)
				out = append(out, Finding{RuleID: rm.ID, Severity: rm.Severity, Confidence: Certain, Subject: subj(k, n), Fix: rm.Fix,
					Message: fmt.Sprintf("tool %q of the lockfile is gone", n)})
			} else {
				out = append(out, driftOther(subj(k, n), fmt.Sprintf("%s %q of the lockfile is gone", k, n), Low))
			}
		}
	}
	SortFindings(out)
	return out
}

func sortedKeys(m map[string]*LockEntry) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sameEntry(a, b *LockEntry) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.SHA256 == b.SHA256
}

// sameButName reports definitions equal once name and title are dropped.
func sameButName(a, b *LockEntry) bool {
	av, err1 := decodeJSON(a.Definition)
	bv, err2 := decodeJSON(b.Definition)
	am, ok1 := av.(map[string]any)
	bm, ok2 := bv.(map[string]any)
	if err1 != nil || err2 != nil || !ok1 || !ok2 {
		return false
	}
	for _, k := range []string{"name", "title"} {
		delete(am, k)
		delete(bm, k)
	}
	return compactJSON(am) == compactJSON(bm)
}

// changedFinding describes a changed definition: drift-tool-changed when anything outside the
// schemas changed on a tool (description, title, annotations …), drift-schema-changed when
// only schemas did, drift-metadata-changed for other kinds.
func changedFinding(k Kind, s Subject, oe, ce *LockEntry) Finding {
	if k != KindTool {
		return driftChanged(RuleDriftOther, s, oe, ce, fmt.Sprintf("%s %q changed", k, s.Name))
	}
	changes := entryChanges(oe, ce)
	schemaOnly := len(changes) > 0
	for _, c := range changes {
		if !strings.HasPrefix(c.Pointer, "/inputSchema") && !strings.HasPrefix(c.Pointer, "/outputSchema") {
			schemaOnly = false
		}
	}
	id := RuleDriftChanged
	if schemaOnly {
		id = RuleDriftSchema
	}
	return driftChanged(id, s, oe, ce, fmt.Sprintf("tool %q changed since the lockfile", s.Name))
}

func entryChanges(oe, ce *LockEntry) []Change {
	var ov, cv any
	if oe != nil {
		ov, _ = decodeJSON(oe.Definition)
	}
	if ce != nil {
		cv, _ = decodeJSON(ce.Definition)
	}
	var changes []Change
	diffValues(ov, cv, "", &changes)
	return changes
}

// driftChanged builds a changed-definition finding with its field-level changes as signals.
func driftChanged(id string, s Subject, oe, ce *LockEntry, msg string) Finding {
	r, _ := RuleByID(id)
	changes := entryChanges(oe, ce)
	var sigs []Signal
	var parts []string
	for _, c := range changes {
		sigs = append(sigs, Signal{Kind: "changed", Text: c.String(), Pointer: c.Pointer})
		parts = append(parts, c.Pointer)
	}
	if len(parts) > 0 {
		msg += ": " + strings.Join(parts, ", ")
	}
	f := Finding{RuleID: id, Severity: r.Severity, Confidence: Certain, Subject: s, Fix: r.Fix, Message: msg, Signals: sigs}
	if len(changes) > 0 {
		f.Evidence = &Evidence{Pointer: changes[0].Pointer, Excerpt: visible(strings.TrimPrefix(changes[0].String(), pointerOr(changes[0].Pointer)+": "))}
	}
	return f
}

// driftOther reports a prompt, resource or template added or removed.
func driftOther(s Subject, msg string, sev Severity) Finding {
	r, _ := RuleByID(RuleDriftOther)
	return Finding{RuleID: r.ID, Severity: sev, Confidence: Certain, Subject: s, Fix: r.Fix, Message: msg}
}
