package score

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mcpspec/mcpspec/analyze/inventory"
	"github.com/mcpspec/mcpspec/analyze/retrieval"
	"github.com/mcpspec/mcpspec/analyze/tokens"
	"github.com/mcpspec/mcpspec/session"
)

// RubricVersion names the rubric; a change to any weight, threshold or check is a new version.
const RubricVersion = "v1"

// CriticalCap is the highest score a server with a confirmed critical finding can get.
const CriticalCap = 30

// Category is one of the five groups of checks.
type Category string

// The categories, in report order.
const (
	Security  Category = "security"
	Metadata  Category = "metadata"
	Tokens    Category = "tokens"
	Protocol  Category = "protocol"
	Discovery Category = "discoverability"
)

// Categories lists the categories in report order.
func Categories() []Category { return []Category{Security, Metadata, Tokens, Protocol, Discovery} }

// Input is everything the rubric reads. Nil parts make their checks not apply.
type Input struct {
	Inventory *inventory.Inventory
	// Tokens is the token report of the inventory's tools (o200k_base).
	Tokens *tokens.Report
	// Probes are the protocol probes run on a live session.
	Probes *Probes
	// Security holds the audit's findings; nil when no audit ran.
	Security *SecurityInput
	// Retrieval is a golden set's report, when one was given.
	Retrieval *retrieval.Report
}

// SecurityInput is what the security category reads of an audit.
type SecurityInput struct {
	// Source names the audit ("mcpspec audit passive").
	Source   string
	Findings []SecurityFinding
}

// SecurityFinding is one audit finding that is not suppressed.
type SecurityFinding struct {
	Rule string
	// Severity is 0 info, 1 low, 2 medium, 3 high, 4 critical.
	Severity int
	// Confidence is 0 tentative, 1 firm, 2 certain.
	Confidence int
	Subject    string
	Message    string
}

// Check is one line of the rubric as applied to a server.
type Check struct {
	ID       string   `json:"id"`
	Category Category `json:"category"`
	// Applies is false when the check does not apply; its points then leave the denominator.
	Applies  bool    `json:"applies"`
	Possible float64 `json:"possible"`
	Earned   float64 `json:"earned"`
	// Reason says why the points were earned or lost (or why the check does not apply).
	Reason string `json:"reason"`
	// Items name what failed (tools, findings), when there are any.
	Items []string `json:"items,omitempty"`
}

// CategoryTotal sums a category's applicable checks.
type CategoryTotal struct {
	Category Category `json:"category"`
	Possible float64  `json:"possible"`
	Earned   float64  `json:"earned"`
}

// Result is a server's score with every check.
type Result struct {
	Rubric string `json:"rubric"`
	// Score is 100 × earned / possible, rounded half up, capped by a confirmed critical.
	Score int `json:"score"`
	// Raw is the score before any cap.
	Raw      float64 `json:"raw"`
	Possible float64 `json:"possible"`
	Earned   float64 `json:"earned"`
	// Cap explains a cap that applied ("" when none).
	Cap        string          `json:"cap,omitempty"`
	Categories []CategoryTotal `json:"categories"`
	Checks     []Check         `json:"checks"`
}

// Rate applies the rubric to in.
func Rate(in *Input) *Result {
	r := &Result{Rubric: RubricVersion}
	var checks []Check
	checks = append(checks, securityChecks(in)...)
	checks = append(checks, metadataChecks(in)...)
	checks = append(checks, tokenChecks(in)...)
	checks = append(checks, protocolChecks(in)...)
	checks = append(checks, discoveryChecks(in)...)
	totals := map[Category]*CategoryTotal{}
	for _, c := range Categories() {
		totals[c] = &CategoryTotal{Category: c}
	}
	for i := range checks {
		c := &checks[i]
		c.Earned = round2(c.Earned)
		if !c.Applies {
			c.Earned = 0
			continue
		}
		t := totals[c.Category]
		t.Possible += c.Possible
		t.Earned += c.Earned
		r.Possible += c.Possible
		r.Earned += c.Earned
	}
	for _, c := range Categories() {
		t := totals[c]
		t.Earned = round2(t.Earned)
		r.Categories = append(r.Categories, *t)
	}
	r.Earned = round2(r.Earned)
	r.Checks = checks
	if r.Possible > 0 {
		r.Raw = round2(100 * r.Earned / r.Possible)
	}
	r.Score = int(math.Floor(r.Raw + 0.5))
	if in.Security != nil {
		for _, f := range in.Security.Findings {
			if f.Severity == 4 && f.Confidence == 2 && r.Score > CriticalCap {
				r.Score = CriticalCap
				r.Cap = fmt.Sprintf("capped at %d: confirmed critical finding %s (%s)", CriticalCap, f.Rule, f.Subject)
				break
			}
		}
	}
	return r
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

// notApplicable is a check that does not apply, with the reason.
func notApplicable(id string, cat Category, possible float64, reason string) Check {
	return Check{ID: id, Category: cat, Possible: possible, Reason: reason}
}

// fraction is a check worth possible points, earned in proportion to the items that pass.
func fraction(id string, cat Category, possible float64, pass, total int, what string, failed []string) Check {
	c := Check{ID: id, Category: cat, Applies: true, Possible: possible}
	c.Earned = possible * float64(pass) / float64(total)
	c.Reason = fmt.Sprintf("%d of %d %s", pass, total, what)
	slices.Sort(failed)
	c.Items = failed
	return c
}

// versionAtLeast reports whether the negotiated version v is v0 or later (dates compare as
// strings); an unknown version counts as the newest.
func versionAtLeast(v, v0 string) bool { return v == "" || v >= v0 }

// severityPoints and confidenceFactor weigh a finding: points lost = severity × confidence.
var (
	severityPoints   = [...]float64{0, 2, 5, 12, 25}
	confidenceFactor = [...]float64{0.5, 0.8, 1}
	severityNames    = [...]string{"info", "low", "medium", "high", "critical"}
	confidenceNames  = [...]string{"tentative", "firm", "certain"}
)

const securityPoints = 30

func securityChecks(in *Input) []Check {
	if in.Security == nil {
		return []Check{notApplicable("security.audit", Security, securityPoints, "no audit ran")}
	}
	c := Check{ID: "security.audit", Category: Security, Applies: true, Possible: securityPoints}
	lost := 0.0
	fs := slices.Clone(in.Security.Findings)
	slices.SortStableFunc(fs, func(a, b SecurityFinding) int {
		if a.Severity != b.Severity {
			return b.Severity - a.Severity
		}
		return strings.Compare(a.Rule+a.Subject, b.Rule+b.Subject)
	})
	for _, f := range fs {
		s, k := clampIndex(f.Severity, len(severityPoints)), clampIndex(f.Confidence, len(confidenceFactor))
		p := severityPoints[s] * confidenceFactor[k]
		lost += p
		c.Items = append(c.Items, fmt.Sprintf("−%s %s/%s %s: %s (%s)", trim(p), severityNames[s], confidenceNames[k], f.Rule, f.Subject, f.Message))
	}
	c.Earned = math.Max(0, securityPoints-lost)
	if len(fs) == 0 {
		c.Reason = fmt.Sprintf("%s found nothing", in.Security.Source)
	} else {
		c.Reason = fmt.Sprintf("%s: %d finding(s) weigh %s points (severity × confidence)", in.Security.Source, len(fs), trim(lost))
	}
	return []Check{c}
}

func clampIndex(i, n int) int { return min(max(i, 0), n-1) }

// trim formats a point count without trailing zeros.
func trim(f float64) string {
	s := fmt.Sprintf("%.2f", f)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// negotiated is the protocol version the inventory was listed with ("" when unknown).
func negotiated(in *Input) string {
	if in.Inventory == nil {
		return ""
	}
	return in.Inventory.ProtocolVersion
}

// toolsOf returns the inventory's tools (nil without an inventory).
func toolsOf(in *Input) []session.Tool {
	if in.Inventory == nil {
		return nil
	}
	return in.Inventory.Tools
}
