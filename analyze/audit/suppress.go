package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/internal/regfile"
	"gopkg.in/yaml.v3"
)

// Suppression accepts a known risk: findings of Rule (an id or glob) on the matching server
// and subject are reported as suppressed, with Reason, until Expires. Suppressions live in a
// committed file (.mcpspec/audit-suppressions.yaml) so that accepting a risk is reviewed like
// code.
type Suppression struct {
	Rule string `json:"rule" yaml:"rule"`
	// Server is a glob over the server name ("" = any).
	Server string `json:"server,omitempty" yaml:"server"`
	// Subject is a glob over the subject's name: a tool or prompt name, a resource URI ("" = any).
	Subject string `json:"subject,omitempty" yaml:"subject"`
	Reason  string `json:"reason" yaml:"reason"`
	// Expires is the last day (YYYY-MM-DD, UTC) the suppression applies.
	Expires string `json:"expires" yaml:"expires"`
	// File and Line say where the suppression is written.
	File string `json:"file,omitempty" yaml:"-"`
	Line int    `json:"line,omitempty" yaml:"-"`
}

// SuppressionError is a problem in a suppressions file, with its line.
type SuppressionError struct {
	File string
	Line int
	Msg  string
}

func (e *SuppressionError) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// MaxSuppressionBytes bounds a suppressions file: a larger one is refused, unread.
const MaxSuppressionBytes = 1 << 20

// DefaultSuppressionsPath is the committed suppressions file, relative to the repository root.
const DefaultSuppressionsPath = ".mcpspec/audit-suppressions.yaml"

// LoadSuppressions reads the suppressions file at path with [ReadSuppressions]. An empty path
// means [DefaultSuppressionsPath], which may be missing (no suppressions, no error); a path
// named explicitly must exist.
func LoadSuppressions(path string) ([]Suppression, error) {
	explicit := path != ""
	if !explicit {
		path = DefaultSuppressionsPath
	}
	f, err := regfile.OpenLimit(path, MaxSuppressionBytes)
	if err != nil {
		if !explicit && errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	return ReadSuppressions(f, path)
}

// ReadSuppressions parses a suppressions file strictly: unknown keys, a missing rule, reason
// or expiry date, a bad date or a pattern that matches no rule are errors naming the line.
// name is used in errors and as each suppression's File.
func ReadSuppressions(r io.Reader, name string) ([]Suppression, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSuppressionBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read suppressions %s: %w", name, err)
	}
	if len(data) > MaxSuppressionBytes {
		return nil, &SuppressionError{File: name, Line: 1, Msg: "file larger than 1 MiB"}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &SuppressionError{File: name, Line: yamlLine(err), Msg: err.Error()}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, &SuppressionError{File: name, Line: root.Line, Msg: "want a mapping with a suppressions: list"}
	}
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i]
		if k.Value != "suppressions" {
			return nil, &SuppressionError{File: name, Line: k.Line, Msg: fmt.Sprintf("unknown key %q (want suppressions)", k.Value)}
		}
		list = root.Content[i+1]
	}
	if list == nil || list.Kind == yaml.ScalarNode && list.Tag == "!!null" {
		return nil, nil
	}
	if list.Kind != yaml.SequenceNode {
		return nil, &SuppressionError{File: name, Line: list.Line, Msg: "suppressions must be a list"}
	}
	var out []Suppression
	for _, n := range list.Content {
		var s Suppression
		if n.Kind != yaml.MappingNode {
			return nil, &SuppressionError{File: name, Line: n.Line, Msg: "a suppression must be a mapping with rule, reason and expires"}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Kind != yaml.ScalarNode {
				return nil, &SuppressionError{File: name, Line: v.Line, Msg: fmt.Sprintf("%s must be a string", k.Value)}
			}
			switch k.Value {
			case "rule":
				s.Rule = v.Value
			case "server":
				s.Server = v.Value
			case "subject", "tool":
				s.Subject = v.Value
			case "reason":
				s.Reason = strings.TrimSpace(v.Value)
			case "expires":
				s.Expires = v.Value
			default:
				return nil, &SuppressionError{File: name, Line: k.Line, Msg: fmt.Sprintf("unknown key %q (want rule, server, subject, reason, expires)", k.Value)}
			}
		}
		s.File, s.Line = name, n.Line
		if err := s.check(); err != nil {
			return nil, &SuppressionError{File: name, Line: n.Line, Msg: err.Error()}
		}
		out = append(out, s)
	}
	return out, nil
}

// check validates one suppression.
func (s *Suppression) check() error {
	if s.Rule == "" {
		return errors.New("rule is required (a rule id such as exec-capability, or a glob)")
	}
	if err := (&Rules{Only: []string{s.Rule}}).Check(); err != nil {
		return err
	}
	for _, g := range []string{s.Server, s.Subject} {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("pattern %q: %w", g, err)
		}
	}
	if s.Reason == "" {
		return errors.New("reason is required: say why the risk is accepted")
	}
	if s.Expires == "" {
		return errors.New("expires is required (YYYY-MM-DD): accepted risks get reviewed again")
	}
	if _, err := time.Parse(time.DateOnly, s.Expires); err != nil {
		return fmt.Errorf("expires %q is not a date (YYYY-MM-DD)", s.Expires)
	}
	return nil
}

// expired reports whether the suppression no longer applies on day now (UTC).
func (s *Suppression) expired(now time.Time) bool {
	d, err := time.Parse(time.DateOnly, s.Expires)
	if err != nil {
		return true
	}
	return now.UTC().After(d.Add(24*time.Hour - time.Nanosecond))
}

// matches reports whether the suppression covers f.
func (s *Suppression) matches(f *Finding) bool {
	glob := func(g, v string) bool {
		if g == "" {
			return true
		}
		ok, _ := path.Match(g, v)
		return ok
	}
	return glob(s.Rule, f.RuleID) && glob(s.Server, f.Subject.Server) && glob(s.Subject, f.Subject.Name)
}

// Suppress marks the findings covered by a suppression that has not expired on day now, and
// returns them with one finding per expired suppression (suppression-expired, located at its
// line) and per suppression that matched nothing (suppression-unused). Suppression findings
// themselves are never suppressed.
func Suppress(fs []Finding, sups []Suppression, now time.Time) []Finding {
	used := make([]bool, len(sups))
	out := make([]Finding, 0, len(fs))
	for _, f := range fs {
		if f.Subject.Kind != KindSuppression {
			for i := range sups {
				if sups[i].expired(now) || !sups[i].matches(&f) {
					continue
				}
				s := sups[i]
				f.Suppressed = &s
				used[i] = true
				break
			}
		}
		out = append(out, f)
	}
	for i := range sups {
		s := &sups[i]
		subj := Subject{Server: s.Server, Kind: KindSuppression, Name: s.Rule}
		loc := &Location{File: s.File, Line: s.Line}
		switch {
		case s.expired(now):
			r, _ := RuleByID(RuleSuppressionExpired)
			out = append(out, Finding{RuleID: r.ID, Severity: r.Severity, Confidence: Certain, Subject: subj, Location: loc,
				Message: fmt.Sprintf("the suppression of %s (%q) expired on %s", s.Rule, s.Reason, s.Expires), Fix: r.Fix})
		case !used[i]:
			r, _ := RuleByID(RuleSuppressionUnused)
			out = append(out, Finding{RuleID: r.ID, Severity: r.Severity, Confidence: Certain, Subject: subj, Location: loc,
				Message: fmt.Sprintf("the suppression of %s (%q) matched no finding", s.Rule, s.Reason), Fix: r.Fix})
		}
	}
	return out
}

// yamlLine extracts the line number from a yaml.v3 error message, 1 when it has none.
func yamlLine(err error) int {
	var line int
	if _, e := fmt.Sscanf(strings.TrimPrefix(err.Error(), "yaml: "), "line %d:", &line); e == nil && line > 0 {
		return line
	}
	return 1
}
