package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Severity ranks how much harm a finding points at. The zero value is [Info].
type Severity int

// The severities, lowest first.
const (
	Info Severity = iota
	Low
	Medium
	High
	Critical
)

var severityNames = [...]string{"info", "low", "medium", "high", "critical"}

// String returns "info", "low", "medium", "high" or "critical".
func (s Severity) String() string {
	if s < Info || s > Critical {
		return fmt.Sprintf("severity(%d)", int(s))
	}
	return severityNames[s]
}

// ParseSeverity reads a severity name (case-insensitive).
func ParseSeverity(name string) (Severity, error) {
	for i, n := range severityNames {
		if strings.EqualFold(strings.TrimSpace(name), n) {
			return Severity(i), nil
		}
	}
	return Info, fmt.Errorf("unknown severity %q (want one of %s)", name, strings.Join(severityNames[:], ", "))
}

// MarshalText encodes the severity by name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText decodes a severity name.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// SecuritySeverity is the CVSS-like score GitHub code scanning reads from a SARIF rule's
// security-severity property: critical 9.5, high 8.0, medium 5.5, low 3.0, info 0.0.
func (s Severity) SecuritySeverity() string {
	switch s {
	case Critical:
		return "9.5"
	case High:
		return "8.0"
	case Medium:
		return "5.5"
	case Low:
		return "3.0"
	}
	return "0.0"
}

// Confidence says how sure a rule is that a finding is real. The zero value is [Tentative].
type Confidence int

// The confidences, least sure first.
const (
	// Tentative: one heuristic matched; read the evidence before acting.
	Tentative Confidence = iota
	// Firm: several independent signals agree.
	Firm
	// Certain: the evidence is proof (a decoded hidden text, a known token format, an echoed
	// nonce, a contradiction between what the server declares and what it sent).
	Certain
)

var confidenceNames = [...]string{"tentative", "firm", "certain"}

// String returns "tentative", "firm" or "certain".
func (c Confidence) String() string {
	if c < Tentative || c > Certain {
		return fmt.Sprintf("confidence(%d)", int(c))
	}
	return confidenceNames[c]
}

// MarshalText encodes the confidence by name.
func (c Confidence) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText decodes a confidence name.
func (c *Confidence) UnmarshalText(b []byte) error {
	for i, n := range confidenceNames {
		if strings.EqualFold(string(b), n) {
			*c = Confidence(i)
			return nil
		}
	}
	return fmt.Errorf("unknown confidence %q", b)
}

// Kind is what a finding is about.
type Kind string

// The kinds of subject.
const (
	KindTool         Kind = "tool"
	KindPrompt       Kind = "prompt"
	KindResource     Kind = "resource"
	KindTemplate     Kind = "resourceTemplate"
	KindInstructions Kind = "instructions"
	KindServer       Kind = "server"
	KindSuppression  Kind = "suppression"
)

// Subject names what a finding is about: a tool, prompt, resource (by URI), resource template
// (by URI template), the server's instructions or the server as a whole.
type Subject struct {
	Server string `json:"server"`
	Kind   Kind   `json:"kind"`
	Name   string `json:"name,omitempty"`
}

// String renders `tool "echo" (server)`.
func (s Subject) String() string {
	if s.Name == "" {
		return fmt.Sprintf("%s of %s", s.Kind, s.Server)
	}
	return fmt.Sprintf("%s %q of %s", s.Kind, s.Name, s.Server)
}

// Signal is one piece of evidence a rule weighed: its kind ("imperative", "pseudo-tag",
// "sensitive-target", "tag-characters" …), the text that matched and where.
type Signal struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
	// Pointer is the JSON pointer of the string within the subject's definition ("" for
	// signals that are not about one string, such as an annotation's absence).
	Pointer string `json:"pointer,omitempty"`
	// Start and End are byte offsets of the match within that string.
	Start int `json:"start"`
	End   int `json:"end"`
}

// Evidence is the excerpt a finding shows: the string at Pointer in the subject's definition,
// cut around the span [Start, End) (byte offsets in the whole string), with invisible and
// control characters made visible.
type Evidence struct {
	Pointer string `json:"pointer,omitempty"`
	// Excerpt is the visible rendering of the text around the span.
	Excerpt string `json:"excerpt"`
	Start   int    `json:"start"`
	End     int    `json:"end"`
	// Decoded is hidden text recovered from the span (Unicode tag characters, variation-selector
	// bytes), when there is any.
	Decoded string `json:"decoded,omitempty"`
}

// Location is where a finding points in the repository: the committed lockfile and the line
// of the subject's entry. SARIF needs one on every result.
type Location struct {
	File string `json:"file"`
	Line int    `json:"line"`
}

// Finding is one problem an audit found, with everything needed to judge it: the rule, how bad
// and how sure, the evidence, the signals that fired, and the fix.
type Finding struct {
	RuleID     string     `json:"ruleId"`
	Severity   Severity   `json:"severity"`
	Confidence Confidence `json:"confidence"`
	Subject    Subject    `json:"subject"`
	// Message says in one sentence what was found.
	Message  string    `json:"message"`
	Evidence *Evidence `json:"evidence,omitempty"`
	Signals  []Signal  `json:"signals,omitempty"`
	// Related names the other subjects involved (the tools of a toxic flow, a shadowed tool).
	Related []Subject `json:"related,omitempty"`
	// Fix says what to change.
	Fix string `json:"fix"`
	// Location is filled by [Locate]; empty before.
	Location *Location `json:"location,omitempty"`
	// Suppressed is set when a committed suppression covers this finding.
	Suppressed *Suppression `json:"suppressed,omitempty"`
}

// Fingerprint is a stable identity for the finding across runs: the rule, the subject and the
// evidence pointer, not line numbers or wording, so SARIF consumers can track it.
func (f *Finding) Fingerprint() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s", f.RuleID, f.Subject.Server, f.Subject.Kind, f.Subject.Name)
	if f.Evidence != nil {
		fmt.Fprintf(h, "\x00%s", f.Evidence.Pointer)
	}
	for _, r := range f.Related {
		fmt.Fprintf(h, "\x00%s/%s/%s", r.Server, r.Kind, r.Name)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// Active reports whether the finding counts: not suppressed.
func (f *Finding) Active() bool { return f.Suppressed == nil }

// MaxSeverity returns the highest severity among the findings that are not suppressed, and
// false when there is none.
func MaxSeverity(fs []Finding) (Severity, bool) {
	max, any := Info, false
	for i := range fs {
		if !fs[i].Active() {
			continue
		}
		if !any || fs[i].Severity > max {
			max = fs[i].Severity
		}
		any = true
	}
	return max, any
}

// AtLeast returns the findings that are not suppressed with a severity of at least min.
func AtLeast(fs []Finding, min Severity) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Active() && f.Severity >= min {
			out = append(out, f)
		}
	}
	return out
}
