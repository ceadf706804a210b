package audit

import (
	"context"
	"time"
)

// ReportVersion identifies the JSON shape of [Report] (schema/audit.v1.json).
const ReportVersion = "1"

// Options tunes [Run]. A nil *Options means every passive rule, no lockfile, no suppressions.
type Options struct {
	// Rules selects the rules (nil = all). Its Others field is ignored: Run audits every
	// server given alongside the others.
	Rules *Rules
	// Lock is the committed lockfile, nil when there is none (no drift rules then).
	Lock *Lock
	// LockFile and LockData locate findings (see [Locate]): the lockfile's path relative to
	// the repository root, and its bytes (nil = as it would be written).
	LockFile string
	LockData []byte
	// Suppressions are the committed suppressions.
	Suppressions []Suppression
	// Now decides which suppressions expired (zero = time.Now()).
	Now time.Time
}

// ServerSummary describes one audited server.
type ServerSummary struct {
	Name            string `json:"name"`
	ServerName      string `json:"serverName,omitempty"`
	ServerVersion   string `json:"serverVersion,omitempty"`
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	Tools           int    `json:"tools"`
	Prompts         int    `json:"prompts"`
	Resources       int    `json:"resources"`
	Templates       int    `json:"resourceTemplates"`
	// Locked says whether the lockfile pins this server.
	Locked bool `json:"locked"`
}

// Report is the outcome of an audit: what was audited, under which rules, and the findings
// (suppressed ones included, marked).
type Report struct {
	Version  string          `json:"reportVersion"`
	Mode     Mode            `json:"mode"`
	Servers  []ServerSummary `json:"servers"`
	LockFile string          `json:"lockFile,omitempty"`
	Rules    []Rule          `json:"rules"`
	Findings []Finding       `json:"findings"`
}

// Run audits the servers passively: every passive rule over each server (with the others as
// context for the cross-server rules), drift against the lockfile, then suppressions. Every
// finding is located in the lockfile. A cancelled ctx stops it at the next tool: Run then
// returns ctx's error and no report.
func Run(ctx context.Context, metas []*Metadata, opts *Options) (*Report, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.LockFile == "" {
		o.LockFile = DefaultLockPath
	}
	rep := &Report{Version: ReportVersion, Mode: Passive, LockFile: o.LockFile}
	var all []Finding
	for _, m := range metas {
		r := Rules{Others: metas}
		if o.Rules != nil {
			r.Only, r.Skip = o.Rules.Only, o.Rules.Skip
		}
		fs, err := PassiveAudit(ctx, m, &r)
		if err != nil {
			return nil, err
		}
		all = append(all, fs...)
		for _, f := range Drift(o.Lock, m) {
			if r.Enabled(f.RuleID) {
				all = append(all, f)
			}
		}
		rep.Servers = append(rep.Servers, summarize(m, o.Lock))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	all = Suppress(all, o.Suppressions, o.Now)
	Locate(all, o.LockFile, o.LockData, metas...)
	SortFindings(all)
	rep.Findings = all
	rep.Rules = rulesOf(Passive, o.Rules)
	if rep.Findings == nil {
		rep.Findings = []Finding{}
	}
	return rep, nil
}

// summarize describes m for a report.
func summarize(m *Metadata, lock *Lock) ServerSummary {
	s := ServerSummary{Name: m.Name, ServerName: m.ServerInfo.Name, ServerVersion: m.ServerInfo.Version, ProtocolVersion: m.ProtocolVersion,
		Tools: len(m.Tools), Prompts: len(m.Prompts), Resources: len(m.Resources), Templates: len(m.ResourceTemplates)}
	s.Locked = lock != nil && lock.Servers[m.Name] != nil
	return s
}

// rulesOf returns the catalog rules of a mode (active includes passive) enabled by r.
func rulesOf(mode Mode, r *Rules) []Rule {
	var out []Rule
	for _, ru := range Catalog() {
		if (ru.Mode == Passive || mode == ActiveMode) && r.Enabled(ru.ID) {
			out = append(out, ru)
		}
	}
	return out
}

// Counts tallies the active (not suppressed) findings by severity.
func (r *Report) Counts() map[Severity]int {
	c := map[Severity]int{}
	for _, f := range r.Findings {
		if f.Active() {
			c[f.Severity]++
		}
	}
	return c
}

// Failing returns the active findings at or above min: those that fail a --fail-on gate.
func (r *Report) Failing(min Severity) []Finding { return AtLeast(r.Findings, min) }
