package race

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

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
	// Reference is the canonical answer most control calls gave (cut to 64 KiB: an exemplar);
	// ReferenceDigest the sha256 of all of it.
	Reference       string `json:"reference"`
	ReferenceDigest string `json:"referenceDigest,omitempty"`
	// Groups are the distinct canonical answers of the concurrent calls, most frequent first.
	Groups []Group `json:"groups"`
	// Unanswered counts the concurrent calls that got no answer at all (a timeout, the
	// connection gone, a malformed frame); they are in no group.
	Unanswered int `json:"unanswered,omitempty"`
	// NoAnswer tallies the calls without an answer by class, gravest first.
	NoAnswer  []NoAnswer `json:"noAnswer,omitempty"`
	CrossTalk *CrossTalk `json:"crossTalk,omitempty"`
	// LostUpdates is the lost-update form, when a read-back tool was named or picked.
	LostUpdates *LostUpdates `json:"lostUpdates,omitempty"`
	// Incomplete says why the check stopped before the end, if it did.
	Incomplete string        `json:"incomplete,omitempty"`
	Duration   time.Duration `json:"-"`
}

// Group is one distinct answer of the concurrent calls.
type Group struct {
	Count int `json:"count"`
	// Canonical is the key-sorted JSON of the answer, volatile fields included, cut to 64 KiB
	// (one exemplar per distinct answer); Digest is the sha256 of all of it.
	Canonical string `json:"canonical"`
	Digest    string `json:"digest"`
	// Divergent is set when the answer differs from the reference outside volatile paths;
	// Paths lists where, and Diff shows how, one "path: reference → this answer" line each.
	Divergent bool     `json:"divergent"`
	Paths     []string `json:"paths,omitempty"`
	Diff      string   `json:"diff,omitempty"`
}

// NoAnswer is the calls of one class that got no answer.
type NoAnswer struct {
	Class UnansweredClass `json:"class"`
	// Category is the fault category of the first such call; Message what it said.
	Category session.Category `json:"category,omitempty"`
	Message  string           `json:"message,omitempty"`
	// Concurrent and Alone count such calls among the concurrent and the control calls.
	Concurrent int `json:"concurrent"`
	Alone      int `json:"alone"`
}

// UnansweredClass is why a call got no answer; its JSON form is the string.
type UnansweredClass string

// Classes of calls without an answer, gravest first.
const (
	// UnansweredCrash: the server went away during the call (Crash, Disconnected).
	UnansweredCrash UnansweredClass = "crash"
	// UnansweredLost: the server ended the call's response stream before the answer, with
	// nothing to resume it from (a lost response).
	UnansweredLost UnansweredClass = "lost response"
	// UnansweredMalformed: the answer could not be read (Malformed).
	UnansweredMalformed UnansweredClass = "malformed"
	// UnansweredTimeout: no answer in time (Timeout, Deadlock).
	UnansweredTimeout UnansweredClass = "timeout"
	// UnansweredFailed: anything else (the check was stopped, …).
	UnansweredFailed UnansweredClass = "failed"
)

// verdict is the check's verdict when calls of class c got no answer and no race showed.
func (c UnansweredClass) verdict() Verdict {
	switch c {
	case UnansweredCrash:
		return VerdictCrash
	case UnansweredMalformed:
		return VerdictMalformed
	case UnansweredLost:
		return VerdictLost
	}
	return VerdictNoAnswer
}

// Found reports whether the check found a bug: a race, a crash or malformed answers. Calls
// that merely got no answer in time (VerdictNoAnswer) are not one: that is for the deadlock
// detector to tell.
func (r *Report) Found() bool {
	return r.Verdict == VerdictRace || r.Verdict == VerdictCrash || r.Verdict == VerdictMalformed || r.Verdict == VerdictLost
}

// answer is one distinct answer made comparable.
type answer struct {
	// canonical is its canonical JSON, cut to maxExemplar; digest the sha256 of all of it.
	canonical string
	digest    string
	leaves    leaves
}

// call is one call of a check: how it ended (its raw result dropped once reduced), and what
// was kept of its answer: the key of its answer (see answers.record), or, in the cross-talk
// form, the markers it carried and an excerpt.
type call struct {
	o       detect.Outcome
	key     string
	marks   []int
	excerpt string
}

// compare judges the identical calls: volatile paths from the control calls, then every
// concurrent answer against the reference. Calls that got no answer are no answer to compare:
// they are tallied by class in NoAnswer.
func (r *Report) compare(store *answers, seq, con []call) {
	r.SequentialCalls, r.ConcurrentCalls = len(seq), len(con)
	noAnswer := map[UnansweredClass]*NoAnswer{}
	tally := func(c call, concurrent bool) {
		cl := unansweredClass(c.o)
		n := noAnswer[cl]
		if n == nil {
			n = &NoAnswer{Class: cl, Category: c.o.Category, Message: cut(c.o.Message, 300)}
			noAnswer[cl] = n
		}
		if concurrent {
			n.Concurrent++
		} else {
			n.Alone++
		}
	}
	// Volatility is learnt from the control calls that were answered: one that got no answer
	// (a server wedged or gone after the rounds before it) says nothing about what varies by
	// design.
	var base []*answer
	count := map[string]int{}
	for _, c := range seq {
		if !c.o.Answered() {
			tally(c, false)
			continue
		}
		a := store.get(c.key)
		base = append(base, a)
		count[a.digest]++
	}
	var ref *answer
	if len(base) > 0 {
		ref = base[0]
		for _, a := range base {
			if count[a.digest] > count[ref.digest] {
				ref = a
			}
		}
		r.Reference, r.ReferenceDigest = ref.canonical, ref.digest
	}
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
	for _, c := range con {
		if !c.o.Answered() {
			r.Unanswered++
			tally(c, true)
			continue
		}
		g := groups[c.key]
		if g == nil {
			a := store.get(c.key)
			g = &Group{Canonical: a.canonical, Digest: a.digest}
			if ref != nil {
				for _, p := range differences(ref.leaves, a.leaves) {
					if m, ok := masked[p]; ok && maskTokens(a.leaves[p]) == m {
						continue
					}
					if !excused(p, volatile, store.parents) {
						g.Paths = append(g.Paths, p)
						divergent[p] = true
					}
				}
			}
			if len(g.Paths) > 0 {
				g.Divergent = true
				g.Diff = diff(ref.leaves, a.leaves, g.Paths)
			}
			groups[c.key] = g
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
	for _, cl := range []UnansweredClass{UnansweredCrash, UnansweredLost, UnansweredMalformed, UnansweredTimeout, UnansweredFailed} {
		if n := noAnswer[cl]; n != nil {
			r.NoAnswer = append(r.NoAnswer, *n)
		}
	}
}

// unansweredClass says why a call got no answer.
func unansweredClass(o detect.Outcome) UnansweredClass {
	switch {
	case o.Class == detect.Crash:
		return UnansweredCrash
	case o.Class == detect.Lost:
		return UnansweredLost
	case o.Category == session.Malformed:
		return UnansweredMalformed
	case o.Class == detect.Deadlock || o.Category == session.Timeout || o.Category == session.Hang:
		return UnansweredTimeout
	}
	return UnansweredFailed
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
	lost := r.LostUpdates != nil && len(r.LostUpdates.Lost) > 0
	unanswered := r.unanswered()
	switch {
	case div > 0:
		r.Verdict = VerdictRace
		r.Diagnosis = fmt.Sprintf("answers diverge only under concurrency: %d of %d answered concurrent calls differ from the answer of calls made one at a time at %s, which never varied in %d such calls",
			div, r.ConcurrentCalls-r.Unanswered, pathList(r.DivergentPaths), r.SequentialCalls)
		if unanswered != nil {
			r.Diagnosis += "; besides, " + r.noAnswerDiagnosis(*unanswered)
		}
	case lost:
		r.Verdict = VerdictRace
		r.Diagnosis = r.LostUpdates.Reason
		if unanswered != nil {
			r.Diagnosis += "; besides, " + r.noAnswerDiagnosis(*unanswered)
		}
	case leaked:
		r.Verdict = VerdictRace
		r.Diagnosis = "cross-talk: " + r.CrossTalk.Reason
		if unanswered != nil {
			r.Diagnosis += "; besides, " + r.noAnswerDiagnosis(*unanswered)
		}
	case unanswered != nil && unanswered.Class != UnansweredFailed:
		r.Verdict = unanswered.Class.verdict()
		r.Diagnosis = "not a race: " + r.noAnswerDiagnosis(*unanswered)
	case r.SequentialCalls == 0 || r.ConcurrentCalls == 0 || r.Reference == "":
		r.Verdict = VerdictIncomplete
		r.Diagnosis = "nothing to compare: the check was stopped before it made its calls"
		if unanswered != nil {
			r.Diagnosis = "nothing to compare: " + r.noAnswerDiagnosis(*unanswered)
		}
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
	if lu := r.LostUpdates; lu != nil && !lost {
		r.Diagnosis += "; lost updates (read back with " + lu.ReadBack + "): " + lu.Reason
	}
	if ctx.Err() != nil {
		r.Incomplete = "stopped before the end: " + context.Cause(ctx).Error()
		if !r.Found() {
			r.Verdict = VerdictIncomplete
		}
	}
}

// unanswered returns the gravest class of calls that got no answer, nil when every call got one.
func (r *Report) unanswered() *NoAnswer {
	if len(r.NoAnswer) == 0 {
		return nil
	}
	return &r.NoAnswer[0]
}

// noAnswerDiagnosis says how many calls of class n got no answer, and which verb looks into it.
func (r *Report) noAnswerDiagnosis(n NoAnswer) string {
	var where []string
	if n.Concurrent > 0 {
		where = append(where, fmt.Sprintf("%d of %d concurrent calls", n.Concurrent, r.ConcurrentCalls))
	}
	if n.Alone > 0 {
		where = append(where, fmt.Sprintf("%d of %d calls made one at a time", n.Alone, r.SequentialCalls))
	}
	calls := strings.Join(where, " and ")
	switch n.Class {
	case UnansweredCrash:
		return fmt.Sprintf("the server went away (%s) on %s (%s); mcpspec deadlock --tool %s tells a crash under concurrency from one alone, mcpspec load measures the crash rate",
			n.Category, calls, n.Message, r.Tool)
	case UnansweredLost:
		return fmt.Sprintf("the server ended the response stream before the answer, with nothing to resume it from, on %s: lost responses; mcpspec deadlock --tool %s reports them per call",
			calls, r.Tool)
	case UnansweredMalformed:
		return fmt.Sprintf("%s got a malformed answer (%s); mcpspec call --tool %s shows the frame, mcpspec load counts them per call",
			calls, n.Message, r.Tool)
	case UnansweredTimeout:
		return fmt.Sprintf("%s got no answer in time (%s); mcpspec deadlock --tool %s tells a deadlock from a slow tool",
			calls, n.Category, r.Tool)
	}
	return fmt.Sprintf("%s got no answer (%s)", calls, n.Message)
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
	return cut(displayLeaf(v), 200)
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
