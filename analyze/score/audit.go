package score

import (
	"context"
	"encoding/json"

	"github.com/mcpspec/mcpspec/analyze/audit"
	"github.com/mcpspec/mcpspec/analyze/inventory"
)

// AuditSource names the audit the security category reads.
const AuditSource = "mcpspec audit (passive)"

// Audit runs the passive audit over inv with opts (nil: every passive rule, no lockfile, no
// suppressions) and returns what the security category reads: the findings no suppression
// covers. It lists nothing and calls no tool: the inventory holds what the audit reads. A
// cancelled ctx stops the audit and returns ctx's error.
func Audit(ctx context.Context, inv *inventory.Inventory, opts *audit.Options) (*SecurityInput, error) {
	rep, err := audit.Run(ctx, []*audit.Metadata{AuditMetadata(inv)}, opts)
	if err != nil {
		return nil, err
	}
	return FromAudit(AuditSource, rep.Findings), nil
}

// AuditMetadata is inv as the audit reads it.
func AuditMetadata(inv *inventory.Inventory) *audit.Metadata {
	m := &audit.Metadata{Name: inv.ServerInfo.Name, ServerInfo: inv.ServerInfo, ProtocolVersion: inv.ProtocolVersion,
		Instructions: inv.Instructions, Tools: []json.RawMessage{}}
	if m.Name == "" {
		m.Name = "server"
	}
	for i := range inv.Tools {
		m.Tools = append(m.Tools, rawOr(inv.Tools[i].Raw, inv.Tools[i]))
	}
	for i := range inv.Prompts {
		m.Prompts = append(m.Prompts, rawOr(inv.Prompts[i].Raw, inv.Prompts[i]))
	}
	for i := range inv.Resources {
		m.Resources = append(m.Resources, rawOr(inv.Resources[i].Raw, inv.Resources[i]))
	}
	for i := range inv.Templates {
		m.ResourceTemplates = append(m.ResourceTemplates, rawOr(inv.Templates[i].Raw, inv.Templates[i]))
	}
	return m
}

func rawOr(raw json.RawMessage, v any) json.RawMessage {
	if len(raw) > 0 {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}

// FromAudit keeps the findings no suppression covers, with their severity and confidence.
func FromAudit(source string, fs []audit.Finding) *SecurityInput {
	in := &SecurityInput{Source: source, Findings: []SecurityFinding{}}
	for _, f := range fs {
		if !f.Active() {
			continue
		}
		in.Findings = append(in.Findings, SecurityFinding{Rule: f.RuleID, Severity: int(f.Severity), Confidence: int(f.Confidence),
			Subject: f.Subject.String(), Message: f.Message})
	}
	return in
}
