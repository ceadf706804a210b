package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// SARIFOptions tunes [WriteSARIF].
type SARIFOptions struct {
	// ToolVersion is mcpspec's version ("" = "dev").
	ToolVersion string
	// Category distinguishes this analysis from others uploaded for the same commit (GitHub's
	// automationDetails.id prefix); "" = "mcpspec-audit/" + the server names.
	Category string
}

// sarifLog and the types below are the subset of SARIF 2.1.0 mcpspec writes.
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool              sarifTool         `json:"tool"`
	AutomationDetails sarifAutomation   `json:"automationDetails"`
	Results           []sarifResult     `json:"results"`
	ColumnKind        string            `json:"columnKind"`
	Properties        map[string]any    `json:"properties,omitempty"`
	OriginalURIBaseID map[string]sarifA `json:"originalUriBaseIds,omitempty"`
}

type sarifA struct {
	URI         string        `json:"uri,omitempty"`
	Description *sarifMessage `json:"description,omitempty"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Version        string      `json:"version"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string         `json:"id"`
	Name                 string         `json:"name"`
	ShortDescription     sarifMessage   `json:"shortDescription"`
	FullDescription      sarifMessage   `json:"fullDescription"`
	Help                 sarifMessage   `json:"help"`
	DefaultConfiguration sarifConfig    `json:"defaultConfiguration"`
	Properties           map[string]any `json:"properties"`
}

type sarifConfig struct {
	Level string `json:"level"`
}

type sarifMessage struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

type sarifAutomation struct {
	ID string `json:"id"`
}

type sarifResult struct {
	RuleID              string              `json:"ruleId"`
	RuleIndex           int                 `json:"ruleIndex"`
	Level               string              `json:"level"`
	Message             sarifMessage        `json:"message"`
	Locations           []sarifLocation     `json:"locations"`
	PartialFingerprints map[string]string   `json:"partialFingerprints"`
	Suppressions        []sarifSuppression  `json:"suppressions,omitempty"`
	RelatedLocations    []sarifRelatedPlace `json:"relatedLocations,omitempty"`
	Properties          map[string]any      `json:"properties"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical  `json:"physicalLocation"`
	LogicalLocations []sarifLogical `json:"logicalLocations"`
}

type sarifRelatedPlace struct {
	ID               int            `json:"id"`
	Message          sarifMessage   `json:"message"`
	LogicalLocations []sarifLogical `json:"logicalLocations"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           sarifRegion   `json:"region"`
}

type sarifArtifact struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

type sarifLogical struct {
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

type sarifSuppression struct {
	Kind          string `json:"kind"`
	Status        string `json:"status"`
	Justification string `json:"justification"`
}

// sarifLevel maps a severity to a SARIF level.
func sarifLevel(s Severity) string {
	switch {
	case s >= High:
		return "error"
	case s == Medium:
		return "warning"
	}
	return "note"
}

// precision maps a confidence to GitHub's precision property.
func precision(c Confidence) string {
	switch c {
	case Certain:
		return "very-high"
	case Firm:
		return "high"
	}
	return "medium"
}

// WriteSARIF writes the report as a SARIF 2.1.0 log that GitHub code scanning accepts: every
// result has a physical location (the lockfile, relative to the repository root, and the line
// of its subject's entry), logical locations naming the server and subject, a partial
// fingerprint, and rules carry security-severity. Suppressed findings are included with a
// suppression (status accepted, the reason as justification).
func WriteSARIF(w io.Writer, rep *Report, opts *SARIFOptions) error {
	var o SARIFOptions
	if opts != nil {
		o = *opts
	}
	if o.ToolVersion == "" {
		o.ToolVersion = "dev"
	}
	if o.Category == "" {
		var names []string
		for _, s := range rep.Servers {
			names = append(names, slug(s.Name))
		}
		o.Category = "mcpspec-audit/" + strings.Join(names, "+")
	}
	index := map[string]int{}
	var rules []sarifRule
	addRule := func(r Rule) int {
		if i, ok := index[r.ID]; ok {
			return i
		}
		index[r.ID] = len(rules)
		rules = append(rules, sarifRule{
			ID: r.ID, Name: ruleName(r.ID),
			ShortDescription:     sarifMessage{Text: r.Title},
			FullDescription:      sarifMessage{Text: r.Summary},
			Help:                 sarifMessage{Text: r.Help + "\n\nFix: " + r.Fix, Markdown: fmt.Sprintf("%s\n\n**Fix:** %s", r.Help, r.Fix)},
			DefaultConfiguration: sarifConfig{Level: sarifLevel(r.Severity)},
			Properties: map[string]any{
				"tags":              []string{"security", "mcp", string(r.Mode)},
				"security-severity": r.Severity.SecuritySeverity(),
				"precision":         "high",
			},
		})
		return index[r.ID]
	}
	for _, r := range rep.Rules {
		addRule(r)
	}
	results := make([]sarifResult, 0, len(rep.Findings))
	for _, f := range rep.Findings {
		r, ok := RuleByID(f.RuleID)
		if !ok {
			r = Rule{ID: f.RuleID, Title: f.RuleID, Severity: f.Severity, Summary: f.Message, Help: f.Message, Fix: f.Fix}
		}
		ri := addRule(r)
		loc := f.Location
		if loc == nil {
			loc = &Location{File: rep.LockFile, Line: 1}
		}
		res := sarifResult{
			RuleID: f.RuleID, RuleIndex: ri, Level: sarifLevel(f.Severity),
			Message: sarifMessage{Text: sarifText(f)},
			Locations: []sarifLocation{{
				PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: loc.File, URIBaseID: "%SRCROOT%"}, Region: sarifRegion{StartLine: max(loc.Line, 1)}},
				LogicalLocations: []sarifLogical{logical(f.Subject)},
			}},
			PartialFingerprints: map[string]string{"mcpspecFinding/v1": f.Fingerprint()},
			Properties: map[string]any{
				"severity": f.Severity.String(), "confidence": f.Confidence.String(), "precision": precision(f.Confidence),
				"server": f.Subject.Server, "subjectKind": string(f.Subject.Kind),
			},
		}
		if f.Evidence != nil {
			res.Properties["evidence"] = f.Evidence
		}
		if len(f.Signals) > 0 {
			res.Properties["signals"] = f.Signals
		}
		for i, rs := range f.Related {
			res.RelatedLocations = append(res.RelatedLocations, sarifRelatedPlace{ID: i + 1, Message: sarifMessage{Text: rs.String()}, LogicalLocations: []sarifLogical{logical(rs)}})
		}
		if f.Suppressed != nil {
			res.Suppressions = []sarifSuppression{{Kind: "external", Status: "accepted",
				Justification: fmt.Sprintf("%s (until %s; %s:%d)", f.Suppressed.Reason, f.Suppressed.Expires, f.Suppressed.File, f.Suppressed.Line)}}
		}
		results = append(results, res)
	}
	if rules == nil {
		rules = []sarifRule{}
	}
	log := sarifLog{
		Schema:  "https://json.schemastore.org/sarif-2.1.0.json",
		Version: "2.1.0",
		Runs: []sarifRun{{
			Tool:              sarifTool{Driver: sarifDriver{Name: "mcpspec", InformationURI: "https://github.com/mcpspec/mcpspec", Version: o.ToolVersion, Rules: rules}},
			AutomationDetails: sarifAutomation{ID: o.Category + "/"},
			Results:           results,
			ColumnKind:        "utf16CodeUnits",
			Properties:        map[string]any{"mode": string(rep.Mode), "servers": rep.Servers},
		}},
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(log); err != nil {
		return fmt.Errorf("write sarif: %w", err)
	}
	return nil
}

// sarifText is a result's message: what was found, the evidence and the fix.
func sarifText(f Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s.", f.Subject, f.Message)
	if f.Evidence != nil && f.Evidence.Excerpt != "" {
		fmt.Fprintf(&b, " Evidence: %s", f.Evidence.Excerpt)
		if f.Evidence.Decoded != "" {
			fmt.Fprintf(&b, " (hidden text: %q)", clip(f.Evidence.Decoded, 300))
		}
		b.WriteString(".")
	}
	fmt.Fprintf(&b, " Fix: %s", f.Fix)
	return b.String()
}

// logical names a subject as a SARIF logical location: server/kind/name.
func logical(s Subject) sarifLogical {
	kind := "module"
	switch s.Kind {
	case KindTool:
		kind = "function"
	case KindPrompt, KindInstructions:
		kind = "member"
	case KindResource, KindTemplate:
		kind = "resource"
	}
	name := s.Name
	if name == "" {
		name = string(s.Kind)
	}
	return sarifLogical{Name: name, FullyQualifiedName: s.Server + "/" + string(s.Kind) + "/" + name, Kind: kind}
}

// ruleName turns "tool-shadowing" into "ToolShadowing" (SARIF rule names are identifiers).
func ruleName(id string) string {
	var b strings.Builder
	up := true
	for _, r := range id {
		if r == '-' {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

var slugRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9._-]+`) })

// slug makes a server name safe for an automation id.
func slug(s string) string {
	s = strings.Trim(slugRE().ReplaceAllString(s, "-"), "-")
	if s == "" {
		return "server"
	}
	return s
}
