package race

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/assert"
	"github.com/mcpspec/mcpspec/detect"
	"github.com/mcpspec/mcpspec/session"
)

// The detector keeps the contract of package detect.
var (
	_ detect.Report                    = (*Report)(nil)
	_ detect.RunFunc[Options, *Report] = Run
)

// Report is what a check found. Its JSON form is the `--json` output of `mcpspec race`.
type Report struct {
	Server          session.Implementation `json:"serverInfo"`
	ProtocolVersion string                 `json:"protocolVersion,omitempty"`
	Tool            string                 `json:"tool"`
	Args            map[string]any         `json:"args"`
	// ArgsFrom is "given" or "inputSchema" (made up from it).
	ArgsFrom    string `json:"argsFrom"`
	Concurrency int    `json:"concurrency"`
	Rounds      int    `json:"rounds"`
	// Verdict is VerdictRace, VerdictByDesign, VerdictDeterministic or VerdictIncomplete.
	Verdict   Verdict `json:"verdict"`
	Diagnosis string  `json:"diagnosis"`
	// SequentialCalls and ConcurrentCalls count the identical calls made.
	SequentialCalls int `json:"sequentialCalls"`
	ConcurrentCalls int `json:"concurrentCalls"`
	// VolatilePaths vary one call at a time (excused); DivergentPaths differ only under
	// concurrency.
	VolatilePaths  []string `json:"volatilePaths,omitempty"`
	DivergentPaths []string `json:"divergentPaths,omitempty"`
	// Reference is the canonical answer most control calls gave.
	Reference string `json:"reference"`
	// Groups are the distinct canonical answers of the concurrent calls, most frequent first.
	Groups []Group `json:"groups"`
	// Unanswered counts the concurrent calls that got no answer at all (a timeout, the
	// connection gone): their canonical answer is {"noAnswer": "<category>"}.
	Unanswered int        `json:"unanswered,omitempty"`
	CrossTalk  *CrossTalk `json:"crossTalk,omitempty"`
	// Incomplete says why the check stopped before the end, if it did.
	Incomplete string        `json:"incomplete,omitempty"`
	Duration   time.Duration `json:"-"`
}

// Group is one distinct answer of the concurrent calls.
type Group struct {
	Count int `json:"count"`
	// Canonical is the key-sorted JSON of the answer, volatile fields included.
	Canonical string `json:"canonical"`
	// Divergent is set when the answer differs from the reference outside volatile paths;
	// Paths lists where, and Diff shows how, one "path: reference → this answer" line each.
	Divergent bool     `json:"divergent"`
	Paths     []string `json:"paths,omitempty"`
	Diff      string   `json:"diff,omitempty"`
}

// Found reports whether the check found a race.
func (r *Report) Found() bool { return r.Verdict == VerdictRace }

// answer is one outcome made comparable.
type answer struct {
	doc       any
	canonical string
	leaves    leaves
}

// comparable decodes an outcome and blanks the ignored paths. A call without an answer is
// {"noAnswer": "<category>"}.
func comparable(ctx context.Context, ig *Ignore, o detect.Outcome, parents map[string]string) answer {
	var doc any
	if len(o.Result) > 0 {
		if d, err := assert.DecodeJSON(o.Result); err == nil {
			doc = d
		}
	}
	if doc != nil {
		doc = expandJSONText(doc, 0)
	}
	if doc == nil {
		cat := string(o.Category)
		if cat == "" {
			cat = string(o.Class)
		}
		doc = map[string]any{"noAnswer": cat}
	}
	ig.Apply(ctx, doc)
	a := answer{doc: doc, canonical: assert.CanonicalJSON(doc), leaves: leaves{}}
	flatten(doc, "$", a.leaves, parents)
	return a
}

// compare judges the identical calls: volatile paths from the control calls, then every
// concurrent answer against the reference.
func (r *Report) compare(ctx context.Context, ig *Ignore, seq, con []detect.Outcome) {
	r.SequentialCalls, r.ConcurrentCalls = len(seq), len(con)
	if len(seq) == 0 {
		return
	}
	parents := map[string]string{}
	var base []answer
	count := map[string]int{}
	// Volatility is learnt from the control calls that were answered: one that got no answer
	// (a server wedged by the rounds before it) says nothing about what varies by design.
	answered := seq[:0:0]
	for _, o := range seq {
		if o.Answered() {
			answered = append(answered, o)
		}
	}
	if len(answered) > 0 {
		seq = answered
	}
	for _, o := range seq {
		a := comparable(ctx, ig, o, parents)
		base = append(base, a)
		count[a.canonical]++
	}
	ref := base[0]
	for _, a := range base {
		if count[a.canonical] > count[ref.canonical] {
			ref = a
		}
	}
	r.Reference = ref.canonical
	volatile := map[string]bool{}
	for _, a := range base {
		for _, p := range differences(base[0].leaves, a.leaves) {
			volatile[p] = true
		}
	}
	r.VolatilePaths = sortedKeys(volatile)
	// A string that varies one call at a time only in tokens that vary by design (a timestamp
	// in a sentence) is compared with them masked: the rest of it must not vary either.
	masked := map[string]string{}
	for p := range volatile {
		if m, ok := maskedAlike(base, p); ok {
			masked[p] = m
			delete(volatile, p)
		}
	}

	groups := map[string]*Group{}
	divergent := map[string]bool{}
	for _, o := range con {
		if !o.Answered() {
			r.Unanswered++
		}
		a := comparable(ctx, ig, o, parents)
		g := groups[a.canonical]
		if g == nil {
			g = &Group{Canonical: a.canonical}
			for _, p := range differences(ref.leaves, a.leaves) {
				if m, ok := masked[p]; ok && maskTokens(a.leaves[p]) == m {
					continue
				}
				if !excused(p, volatile, parents) {
					g.Paths = append(g.Paths, p)
					divergent[p] = true
				}
			}
			if len(g.Paths) > 0 {
				g.Divergent = true
				g.Diff = diff(ref.leaves, a.leaves, g.Paths)
			}
			groups[a.canonical] = g
		}
		g.Count++
	}
	for _, g := range groups {
		r.Groups = append(r.Groups, *g)
	}
	sort.SliceStable(r.Groups, func(i, j int) bool {
		if r.Groups[i].Count != r.Groups[j].Count {
			return r.Groups[i].Count > r.Groups[j].Count
		}
		return r.Groups[i].Canonical < r.Groups[j].Canonical
	})
	r.DivergentPaths = sortedKeys(divergent)
}

// decide sets the verdict and the diagnosis.
func (r *Report) decide(ctx context.Context) {
	div := 0
	for _, g := range r.Groups {
		if g.Divergent {
			div += g.Count
		}
	}
	leaked := r.CrossTalk != nil && len(r.CrossTalk.Leaks) > 0
	switch {
	case div > 0:
		r.Verdict = VerdictRace
		r.Diagnosis = fmt.Sprintf("answers diverge only under concurrency: %d of %d concurrent calls differ from the answer of calls made one at a time at %s, which never varied in %d such calls",
			div, r.ConcurrentCalls, pathList(r.DivergentPaths), r.SequentialCalls)
		if r.Unanswered > 0 {
			r.Diagnosis += fmt.Sprintf("; %d of them got no answer at all (see mcpspec deadlock)", r.Unanswered)
		}
	case leaked:
		r.Verdict = VerdictRace
		r.Diagnosis = "cross-talk: " + r.CrossTalk.Reason
	case r.SequentialCalls == 0 || r.ConcurrentCalls == 0:
		r.Verdict = VerdictIncomplete
		r.Diagnosis = "nothing to compare: the check was stopped before it made its calls"
	case len(r.VolatilePaths) > 0:
		r.Verdict = VerdictByDesign
		r.Diagnosis = fmt.Sprintf("answers vary even one call at a time at %s (timestamps, ids, counters); concurrency adds no other difference", pathList(r.VolatilePaths))
	default:
		r.Verdict = VerdictDeterministic
		r.Diagnosis = fmt.Sprintf("all %d answers are identical (%d one at a time, %d concurrent)", r.SequentialCalls+r.ConcurrentCalls, r.SequentialCalls, r.ConcurrentCalls)
	}
	if r.CrossTalk != nil && !leaked && r.Verdict != VerdictRace {
		r.Diagnosis += "; cross-talk: " + r.CrossTalk.Reason
	}
	if ctx.Err() != nil {
		r.Incomplete = "stopped before the end: " + context.Cause(ctx).Error()
		if r.Verdict != VerdictRace {
			r.Verdict = VerdictIncomplete
		}
	}
}

// diff renders, one line per path, how answer b differs from reference a: "path: a → b"
// ("(absent)" for a missing leaf), at most 20 lines.
func diff(a, b leaves, paths []string) string {
	var lines []string
	for i, p := range paths {
		if i == 20 {
			lines = append(lines, fmt.Sprintf("… (%d more paths)", len(paths)-20))
			break
		}
		lines = append(lines, fmt.Sprintf("%s: %s → %s", p, leafOr(a, p), leafOr(b, p)))
	}
	return strings.Join(lines, "\n")
}

// leafOr returns a leaf's value cut for display, or "(absent)".
func leafOr(l leaves, p string) string {
	v, ok := l[p]
	if !ok {
		return "(absent)"
	}
	return cut(v, 200)
}

// pathList renders paths for a sentence, at most five, lengths spelled out.
func pathList(paths []string) string {
	var out []string
	for i, p := range paths {
		if i == 5 {
			out = append(out, fmt.Sprintf("and %d more", len(paths)-5))
			break
		}
		if q, ok := strings.CutSuffix(p, "#len"); ok {
			p = "the length of " + q
		}
		out = append(out, p)
	}
	return strings.Join(out, ", ")
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// MarshalJSON keeps Args an object even when empty.
func (r *Report) MarshalJSON() ([]byte, error) {
	type plain Report
	p := plain(*r)
	if p.Args == nil {
		p.Args = map[string]any{}
	}
	if p.Groups == nil {
		p.Groups = []Group{}
	}
	return jsonMarshal(p)
}

// jsonMarshal encodes v without HTML escaping.
func jsonMarshal(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSpace(b.String())), nil
}
