package collection

import (
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// AuditSpec is the `audit:` block: a passive security audit of one of the collection's
// servers, run by `mcpspec test` after the tests, one test per finding (see package audit).
type AuditSpec struct {
	// Server names the audited server ("" = the default server).
	Server string
	// FailOn is the severity at or above which a finding fails its test: info, low, medium,
	// high (the default), critical or none.
	FailOn string
	// Lockfile is the committed lockfile ("" = .mcpspec/tools.lock); Suppressions the
	// suppressions file ("" = .mcpspec/audit-suppressions.yaml when it exists). Relative paths
	// are relative to the working directory, like the CLI's.
	Lockfile     string
	Suppressions string
	// Skip lists rule ids (or globs) not to run.
	Skip []string
	Pos  Pos
}

// auditSeverities are the values of audit.failOn.
var auditSeverities = []string{"info", "low", "medium", "high", "critical", "none"}

// decodeAudit reads the `audit:` block.
func (d *decoder) decodeAudit(n *yaml.Node, c *Collection) *AuditSpec {
	fs, ok := d.fields(n, "audit", []string{"server", "failOn", "lockfile", "suppressions", "skip"})
	if !ok {
		return nil
	}
	s := &AuditSpec{Pos: d.pos(n), FailOn: "high"}
	if f, ok := fs["server"]; ok {
		s.Server, _ = d.str(f.val, "audit.server")
		if _, known := c.Servers[s.Server]; !known {
			d.errf(f.val, suggest(s.Server, sortedServerNames(c)), "audit.server %q is not a server of the collection", s.Server)
		}
	}
	if _, ok := fs["server"]; !ok && c.DefaultServer == "" {
		d.errf(n, `add "server: NAME"`, "audit: the collection has several servers and no default; say which to audit")
	}
	if f, ok := fs["failOn"]; ok {
		v, _ := d.str(f.val, "audit.failOn")
		if !slices.Contains(auditSeverities, strings.ToLower(v)) {
			d.errf(f.val, "use one of: "+strings.Join(auditSeverities, ", "), "audit.failOn %q is not a severity", v)
		}
		s.FailOn = strings.ToLower(v)
	}
	if f, ok := fs["lockfile"]; ok {
		s.Lockfile, _ = d.str(f.val, "audit.lockfile")
	}
	if f, ok := fs["suppressions"]; ok {
		s.Suppressions, _ = d.str(f.val, "audit.suppressions")
	}
	if f, ok := fs["skip"]; ok {
		s.Skip, _ = d.strList(f.val, "audit.skip")
	}
	return s
}

func sortedServerNames(c *Collection) []string {
	var out []string
	for k := range c.Servers {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
