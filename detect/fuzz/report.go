package fuzz

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpspec/mcpspec/detect/fuzz/mutate"
)

// Report is what a fuzz run found. Its JSON form is the `mcpspec fuzz --json` document.
type Report struct {
	Seed            int64  `json:"seed"`
	Strict          bool   `json:"strict"`
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// Cases counts the cases run.
	Cases    int           `json:"cases"`
	Duration time.Duration `json:"durationNs"`
	// StoppedBy says what ended the run: iterations, time, interrupted, respawns (too many
	// restarts) or restart-failed (the server could not be started again); Stopped adds detail.
	StoppedBy string `json:"stoppedBy"`
	Stopped   string `json:"stopped,omitempty"`
	// Outcomes counts the cases by outcome; Families the same per family.
	Outcomes    map[Outcome]int                `json:"outcomes"`
	Families    map[mutate.Family]*FamilyStats `json:"families"`
	FamiliesRun []mutate.Family                `json:"familiesRun"`
	// Tools are the tools schema cases called; Skipped those left alone, and why.
	Tools   []string      `json:"tools"`
	Skipped []SkippedTool `json:"skippedTools"`
	// Respawns counts the sessions opened after a case lost one.
	Respawns int `json:"respawns"`
	// Findings are the bugs, one per kind of case and outcome, in the order found: those that
	// showed again on a fresh session, or whose reproduction was not tried (minimisation off,
	// no time left). They fail a run.
	Findings []*Finding `json:"findings"`
	// Unconfirmed are findings tried again on a fresh session that did not show: what the run
	// saw once (an answer that arrived late from an earlier case, a timing accident) is listed
	// for a person to look at, and never fails a run.
	Unconfirmed []*Finding `json:"unconfirmed"`
	// Notes say what the run could not do.
	Notes []string `json:"notes,omitempty"`

	byKey map[string]*Finding
	// crashes are the crashes the run saw, with what their sessions had carried.
	crashes []crashAt
	// schemas are the input schemas of the tools fuzzed; meta the stateless era's _meta
	// members the frames carried (nil in the legacy era). Saving findings needs both.
	schemas map[string]json.RawMessage
	meta    []byte
}

// FamilyStats counts one family's cases.
type FamilyStats struct {
	Cases    int             `json:"cases"`
	Outcomes map[Outcome]int `json:"outcomes"`
	// Duration is the time the family's cases took, liveness checks and restarts included.
	Duration time.Duration `json:"durationNs"`
}

// Finding is one bug: the first case that showed it, minimised, with its evidence.
type Finding struct {
	// ID numbers findings in the order found: F1, F2 …
	ID      string        `json:"id"`
	Outcome Outcome       `json:"outcome"`
	Family  mutate.Family `json:"family"`
	Kind    string        `json:"kind"`
	// What describes the case; Detail what happened.
	What   string `json:"what"`
	Detail string `json:"detail"`
	// Case is the number of the first case that showed it; Count how many cases did.
	Case  int `json:"case"`
	Count int `json:"count"`
	// Tool and Args are a schema case's call (minimised).
	Tool string          `json:"tool,omitempty"`
	Args json.RawMessage `json:"arguments,omitempty"`
	// Frames are a frame case's frames as sent (minimised).
	Frames [][]byte `json:"-"`
	// Answer is the answer, or the malformed frame, that decided the outcome; Stderr what the
	// server wrote to stderr during the case.
	Answer []byte `json:"-"`
	Stderr string `json:"stderr,omitempty"`
	// Reproduced says the finding showed again on a fresh session; Minimized that a smaller
	// case still shows it; OriginalSize and Size are the bytes sent before and after.
	Reproduced bool `json:"reproduced"`
	// Unconfirmed says it was tried again and did not show: it does not fail a run.
	Unconfirmed  bool `json:"unconfirmed,omitempty"`
	Minimized    bool `json:"minimized"`
	OriginalSize int  `json:"originalSize"`
	Size         int  `json:"size"`
	// BeforeInit says the frames go on a connection with no handshake.
	BeforeInit bool `json:"beforeInitialize,omitempty"`
	// AfterCalls, when set, says the server died whatever the input once a session had
	// carried that many calls: no case is to blame, and the finding has neither frames nor
	// arguments.
	AfterCalls int `json:"afterCalls,omitempty"`
	// AnyInput says a plain request (a ping, or the tool called with {}) shows it too: it does
	// not depend on what the case sent, so it was not minimised.
	AnyInput bool `json:"anyInput,omitempty"`
	// ProgressToken says a schema finding's tools/call carried a progressToken in
	// params._meta (schema cases alternate with and without one).
	ProgressToken bool `json:"progressToken,omitempty"`

	key string
	// took is how long the first case that showed it took.
	took time.Duration
	// slot is the property path a schema case mutated (kept by minimisation).
	slot []string
	// template is the case's frames with the id placeholder, what minimisation works on.
	template [][]byte
	// earlier are the cases run before it on its session (the suspects of a late crash).
	earlier []mutate.Case
}

// SavedID is the request id findings' frames carry in reports and saved tests: finding n
// (from 1) uses SavedID+n, far above the ids a session issues in a short test.
const SavedID = 900000

// unconfirmedIDs is where unconfirmed findings' ids start above SavedID (U1 → SavedID+50001).
const unconfirmedIDs = 50000

// MarshalJSON renders frames and the answer as text when they are UTF-8, else as base64.
func (f *Finding) MarshalJSON() ([]byte, error) {
	type plain Finding
	var frames []bytesJSON
	for _, fr := range f.Frames {
		frames = append(frames, newBytesJSON(fr))
	}
	var answer *bytesJSON
	if f.Answer != nil {
		a := newBytesJSON(f.Answer)
		answer = &a
	}
	return json.Marshal(struct {
		*plain
		Frames []bytesJSON `json:"frames,omitempty"`
		Answer *bytesJSON  `json:"answer,omitempty"`
	}{(*plain)(f), frames, answer})
}

// bytesJSON is bytes as JSON: text when they are valid UTF-8, base64 otherwise.
type bytesJSON struct {
	Text   string `json:"text,omitempty"`
	Base64 string `json:"base64,omitempty"`
}

func newBytesJSON(b []byte) bytesJSON {
	if utf8.Valid(b) {
		return bytesJSON{Text: string(b)}
	}
	return bytesJSON{Base64: base64.StdEncoding.EncodeToString(b)}
}

func newReport(o *Options) *Report {
	return &Report{
		Seed: o.Seed, Strict: o.Strict, Outcomes: map[Outcome]int{}, Families: map[mutate.Family]*FamilyStats{},
		Tools: []string{}, Skipped: []SkippedTool{}, Findings: []*Finding{}, Unconfirmed: []*Finding{}, byKey: map[string]*Finding{},
	}
}

// add counts one case and records it as a finding when it is a bug.
func (r *Report) add(res *CaseResult) {
	r.Cases++
	r.Outcomes[res.Outcome]++
	fs := r.Families[res.Case.Family]
	if fs == nil {
		fs = &FamilyStats{Outcomes: map[Outcome]int{}}
		r.Families[res.Case.Family] = fs
	}
	fs.Cases++
	fs.Outcomes[res.Outcome]++
	fs.Duration += res.Duration
	r.record(res)
}

// record keeps res as a finding when it is a bug (or counts it for the finding it repeats).
func (r *Report) record(res *CaseResult) {
	if !res.Outcome.Bug(r.Strict) {
		return
	}
	key := findingKey(res)
	if f := r.byKey[key]; f != nil {
		f.Count++
		if res.Outcome == Crash {
			r.crashes = append(r.crashes, crashAt{f, res.onSession})
		}
		return
	}
	c := res.Case
	f := &Finding{
		ID: fmt.Sprintf("F%d", len(r.Findings)+1), Outcome: res.Outcome, Family: c.Family, Kind: c.Kind, What: c.What,
		Detail: res.Detail, Case: c.N, Count: 1, Tool: c.Tool, Args: c.Args, Answer: res.Answer, Stderr: res.Stderr,
		BeforeInit: c.Family == mutate.BeforeInit, key: key, slot: c.Slot, took: res.Duration, earlier: res.earlier,
		ProgressToken: c.Progress,
	}
	if c.Family != mutate.Schema {
		f.template = c.Frames
		f.setFrames(f.template)
	}
	f.OriginalSize = f.size()
	f.Size = f.OriginalSize
	r.byKey[key] = f
	r.Findings = append(r.Findings, f)
	if res.Outcome == Crash {
		r.crashes = append(r.crashes, crashAt{f, res.onSession})
	}
}

// setFrames makes template the finding's frames, with its saved id filled in.
func (f *Finding) setFrames(template [][]byte) {
	f.template = template
	var n int64
	if len(f.ID) > 1 {
		fmt.Sscanf(f.ID[1:], "%d", &n)
	}
	if strings.HasPrefix(f.ID, "U") {
		n += unconfirmedIDs // apart from the findings' ids
	}
	f.Frames = nil
	for _, fr := range template {
		f.Frames = append(f.Frames, mutate.WithID(fr, SavedID+n))
	}
}

// findingKey groups cases that show one bug. When the outcome names its cause (see cause.go)
// that is the key, whatever the family: the way the process ended and its crash report's
// headline, the method left unanswered or an id the server changed, a malformed frame's fault.
// A crash with no crash report is also told apart by what it addressed. Otherwise: the
// outcome, the family, the kind of mutation and what it addressed: the tool, or the method
// where the family mutates params or ids (elsewhere the method is part of the mutation, or
// incidental).
func findingKey(res *CaseResult) string {
	if res.cause != "" {
		cause := res.cause
		if res.Outcome == Crash && strings.HasSuffix(cause, "\x00") {
			cause += causeTarget(res)
		}
		return string(res.Outcome) + "\x00cause\x00" + cause
	}
	target := res.Case.Tool
	switch res.Case.Family {
	case mutate.BadParams, mutate.BadID, mutate.NotificationID, mutate.BeforeInit, mutate.WrongJSONRPC:
		if len(res.Sent) > 0 {
			target = methodOf(res.Sent[0])
		}
	}
	return strings.Join([]string{string(res.Outcome), string(res.Case.Family), res.Case.Kind, target}, "\x00")
}

// methodOf returns the method of a frame that is a JSON object with a string method, else "".
func methodOf(frame []byte) string {
	var m struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(frame, &m)
	return m.Method
}

// size is the bytes the finding sends.
func (f *Finding) size() int {
	if f.Tool != "" {
		return len(f.Args)
	}
	n := 0
	for _, fr := range f.Frames {
		n += len(fr)
	}
	return n
}

// Bugs counts the findings that fail a run (the unconfirmed ones do not).
func (r *Report) Bugs() int { return len(r.Findings) }

// Summary is one line: cases, time, seed, findings by outcome.
func (r *Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "fuzz: %d cases in %s (seed %d, stopped by %s)", r.Cases, r.Duration.Round(time.Millisecond), r.Seed, r.StoppedBy)
	unconfirmed := ""
	if n := len(r.Unconfirmed); n > 0 {
		unconfirmed = fmt.Sprintf("; %d unconfirmed (seen once, not again on a fresh session: not failing the run)", n)
	}
	if len(r.Findings) == 0 {
		b.WriteString(": no finding" + unconfirmed)
		return b.String()
	}
	counts := map[Outcome]int{}
	for _, f := range r.Findings {
		counts[f.Outcome]++
	}
	var parts []string
	for _, o := range Outcomes() {
		if counts[o] > 0 {
			parts = append(parts, fmt.Sprintf("%s ×%d", o, counts[o]))
		}
	}
	fmt.Fprintf(&b, ": %d finding(s): %s%s", len(r.Findings), strings.Join(parts, ", "), unconfirmed)
	return b.String()
}

// OutcomeLine lists the cases by outcome ("rejected 301, answered 120 …"), most frequent first.
func (r *Report) OutcomeLine() string {
	type kv struct {
		o Outcome
		n int
	}
	var list []kv
	for o, n := range r.Outcomes {
		list = append(list, kv{o, n})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].n != list[j].n {
			return list[i].n > list[j].n
		}
		return list[i].o < list[j].o
	})
	var parts []string
	for _, x := range list {
		parts = append(parts, fmt.Sprintf("%s %d", x.o, x.n))
	}
	return strings.Join(parts, ", ")
}
