package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/analyze/audit"
	"github.com/mcpspec/mcpspec/baseline/history"
	"github.com/mcpspec/mcpspec/internal/redact"
	"github.com/mcpspec/mcpspec/internal/regfile"
	"github.com/mcpspec/mcpspec/reporters"
	"github.com/mcpspec/mcpspec/session"
)

// defaultSuppressions is the committed suppressions file audit reads when it exists.
const defaultSuppressions = ".mcpspec/audit-suppressions.yaml"

// auditFormats are the output formats of audit.
var auditFormats = []string{"console", "json", "sarif", "junit", "markdown", "html"}

func (a *app) auditCommand() *cli.Command {
	flags := append(serverFlagDefs(),
		&cli.StringFlag{Name: "mode", Value: "passive", Usage: "passive (metadata only, never calls a tool) or active (calls allowed tools; needs --acknowledge-risk and --allow-tools)"},
		&cli.StringFlag{Name: "fail-on", Value: "high", Usage: "exit 6 when a finding reaches this `SEVERITY`: info, low, medium, high, critical, or none"},
		&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "console", Usage: "output `FORMAT`: " + strings.Join(auditFormats, ", ")},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the report to `FILE` instead of stdout"},
		&cli.BoolFlag{Name: "explain", Usage: "show every signal behind each finding and why the rule fires; without a server, print what audit does and its rules"},
		&cli.StringSliceFlag{Name: "metadata", Usage: "audit saved metadata `FILE` (from --save-metadata) offline; repeatable, and audited alongside --server for the cross-server rules"},
		&cli.StringFlag{Name: "save-metadata", Usage: "write the server's metadata to `FILE` (the input of --metadata)"},
		&cli.StringFlag{Name: "lockfile", Value: audit.DefaultLockPath, Usage: "the committed lockfile `PATH` that pins tool definitions"},
		&cli.BoolFlag{Name: "update-lock", Usage: "write the current definitions into the lockfile (review, then commit it)"},
		&cli.StringFlag{Name: "suppressions", Usage: "suppressions `FILE` (default " + defaultSuppressions + " when it exists)"},
		&cli.StringSliceFlag{Name: "skip", Usage: "skip the rule `ID` (or glob); repeatable"},
		&cli.BoolFlag{Name: "list-rules", Usage: "print the rules and exit"},
		&cli.StringFlag{Name: "category", Usage: "SARIF automationDetails `ID` prefix (default mcpspec-audit/<servers>)"},
		&cli.BoolFlag{Name: "acknowledge-risk", Usage: "active mode: I am auditing a test deployment, not production"},
		&cli.StringSliceFlag{Name: "allow-tools", Usage: "active mode: call only tools matching `GLOB` (repeatable, required)"},
		&cli.BoolFlag{Name: "allow-write", Usage: "active mode: also call tools not annotated readOnlyHint: true"},
		&cli.BoolFlag{Name: "dry-run", Usage: "active mode: print the plan (tools, calls, payload kinds) and call nothing"},
		&cli.IntFlag{Name: "max-calls", Value: 200, Usage: "active mode: at most `N` tools/call requests in all"},
		&cli.IntFlag{Name: "max-calls-per-tool", Value: 32, Usage: "active mode: at most `N` calls per tool"},
		quietFlag(),
	)
	return &cli.Command{
		Name:  "audit",
		Usage: "offline, explainable security audit of a server's metadata (and opt-in active probes)",
		UsageText: `mcpspec audit --server SPEC [--mode passive|active] [--fail-on SEVERITY] [--format console|json|sarif|junit|markdown|html] [--output FILE] [--explain]
mcpspec audit --metadata saved.json [--metadata other.json]
mcpspec audit --server SPEC --update-lock`,
		Description: auditDescription,
		Flags:       flags,
		Action:      a.audit,
	}
}

const auditDescription = `Passive mode (the default) reads what the server lists about itself — tools, prompts,
resources, resource templates and instructions — and never calls a tool. Every finding names
its rule, severity and confidence, shows the evidence (invisible characters made visible,
hidden text decoded), the signals that fired and the fix. Drift is checked against the
committed lockfile (.mcpspec/tools.lock; --update-lock writes it). Accepted risks go in
.mcpspec/audit-suppressions.yaml with a reason and an expiry date.

Exit codes: 0 no finding at or above --fail-on · 6 findings at or above it · 3 bad flags or
files · 4 the server could not be reached.`

// auditJSON is the --format json document (schema/audit.v1.json).
type auditJSON struct {
	*audit.Report
	FailOn   string   `json:"failOn"`
	Failing  int      `json:"failing"`
	ExitCode ExitCode `json:"exitCode"`
}

// auditRun is one invocation's settings.
type auditRun struct {
	f            serverFlags
	mode         audit.Mode
	failOn       *audit.Severity
	format       string
	output       string
	explain      bool
	metadata     []string
	saveMeta     string
	lockPath     string
	updateLock   bool
	suppressions string
	skip         []string
	category     string
	active       activeFlags
	quiet        bool // --quiet: no progress on stderr (active mode says what it calls)
}

func (a *app) readAuditRun(cmd *cli.Command) (*auditRun, error) {
	r := &auditRun{
		f: a.serverFlags(cmd), format: strings.ToLower(cmd.String("format")), output: cmd.String("output"),
		explain: cmd.Bool("explain"), metadata: cmd.StringSlice("metadata"), saveMeta: cmd.String("save-metadata"),
		lockPath: cmd.String("lockfile"), updateLock: cmd.Bool("update-lock"), suppressions: cmd.String("suppressions"),
		skip: cmd.StringSlice("skip"), category: cmd.String("category"), quiet: cmd.Bool("quiet"),
		active: activeFlags{acknowledged: cmd.Bool("acknowledge-risk"), allow: cmd.StringSlice("allow-tools"), allowWrite: cmd.Bool("allow-write"),
			dryRun: cmd.Bool("dry-run"), maxCalls: int(cmd.Int("max-calls")), maxPerTool: int(cmd.Int("max-calls-per-tool"))},
	}
	if r.f.JSON && !cmd.IsSet("format") {
		r.format = "json"
	}
	if r.format == "md" {
		r.format = "markdown"
	}
	if !slices.Contains(auditFormats, r.format) {
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("unknown --format %q", cmd.String("format")), Hint: "use one of: " + strings.Join(auditFormats, ", ")}
	}
	switch m := strings.ToLower(cmd.String("mode")); m {
	case "passive":
		r.mode = audit.Passive
	case "active":
		r.mode = audit.ActiveMode
	default:
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("unknown --mode %q", m), Hint: "use passive (the default: metadata only) or active"}
	}
	if fo := strings.ToLower(strings.TrimSpace(cmd.String("fail-on"))); fo != "none" && fo != "" {
		s, err := audit.ParseSeverity(fo)
		if err != nil {
			return nil, &Error{Code: ExitConfig, Msg: "bad --fail-on: " + err.Error(), Hint: "use info, low, medium, high, critical or none"}
		}
		r.failOn = &s
	}
	if err := (&audit.Rules{Skip: r.skip}).Check(); err != nil {
		return nil, &Error{Code: ExitConfig, Msg: "bad --skip: " + err.Error(), Hint: "mcpspec audit --list-rules prints the rule ids"}
	}
	if r.mode == audit.ActiveMode && len(r.metadata) > 0 && r.f.Server == "" {
		return nil, &Error{Code: ExitConfig, Msg: "active mode needs a live --server", Hint: "saved metadata can only be audited passively"}
	}
	return r, nil
}

func (a *app) audit(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Present() {
		return usageError(cmd, fmt.Errorf("unexpected argument %q", cmd.Args().First()))
	}
	if cmd.Bool("list-rules") {
		return listRules(a.io.Stdout)
	}
	r, err := a.readAuditRun(cmd)
	if err != nil {
		return err
	}
	if r.explain && strings.TrimSpace(r.f.Server) == "" && len(r.metadata) == 0 {
		return explainAudit(a.io.Stdout, r)
	}
	if strings.TrimSpace(r.f.Server) == "" && len(r.metadata) == 0 {
		return &Error{Code: ExitConfig, Msg: "missing --server (or --metadata)",
			Hint: "audit a live server (mcpspec audit --server \"npx -y @modelcontextprotocol/server-everything\") or saved metadata (--metadata FILE)"}
	}
	started := time.Now()
	metas, err := a.loadMetadata(r)
	if err != nil {
		return err
	}
	var live *audit.Metadata
	var active []audit.Finding
	if r.f.Server != "" {
		var dry bool
		live, active, dry, err = a.auditLive(ctx, r)
		if err != nil || dry {
			return err
		}
		metas = append([]*audit.Metadata{live}, metas...)
	}
	if r.saveMeta != "" {
		if live == nil {
			return &Error{Code: ExitConfig, Msg: "--save-metadata needs --server", Hint: "it saves what a live server lists"}
		}
		if err := a.writeFileWith(r.saveMeta, func(w io.Writer) error { return audit.WriteMetadata(w, live) }); err != nil {
			return err
		}
	}
	opts, err := a.auditOptions(r, metas)
	if err != nil {
		return err
	}
	rep, err := audit.Run(ctx, metas, opts)
	if err != nil {
		return err
	}
	if r.mode == audit.ActiveMode {
		rep = withActive(rep, active, opts, metas)
	}
	return a.writeAudit(r, rep, started)
}

// loadMetadata reads the --metadata files.
func (a *app) loadMetadata(r *auditRun) ([]*audit.Metadata, error) {
	var out []*audit.Metadata
	for _, p := range r.metadata {
		f, err := regfile.OpenLimit(p, audit.MaxMetadataBytes)
		if err != nil {
			return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("cannot read --metadata %s: %v", p, err), Hint: "save one with mcpspec audit --server SPEC --save-metadata FILE", Err: err}
		}
		m, err := audit.ReadMetadata(f)
		f.Close()
		if err != nil {
			return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--metadata %s: %v", p, err), Hint: "the file must be a metadata document from --save-metadata, or a tools/list result", Err: err}
		}
		out = append(out, m)
	}
	return out, nil
}

// auditSessionOptions declares roots, sampling and elicitation so servers show every tool
// (some list tools only to clients that declare those capabilities); the canned replies
// decline.
func auditSessionOptions(o *session.Options) {
	o.Roots = []session.Root{}
	o.SamplingReply = json.RawMessage(`{"role":"assistant","content":{"type":"text","text":""},"model":"mcpspec-audit","stopReason":"endTurn"}`)
	o.ElicitationReply = json.RawMessage(`{"action":"decline"}`)
}

// auditLive collects the live server's metadata and, in active mode, runs the active rules.
func (a *app) auditLive(ctx context.Context, r *auditRun) (meta *audit.Metadata, active []audit.Finding, dry bool, err error) {
	if r.mode == audit.ActiveMode {
		return a.auditActive(ctx, r)
	}
	t, err := a.prepare(r.f, "audit", prepareHook{session: auditSessionOptions})
	if err != nil {
		return nil, nil, false, err
	}
	defer func() { t.finish(err != nil) }()
	s, err := t.open(ctx)
	if err != nil {
		return nil, nil, false, err
	}
	defer s.Close()
	meta, err = audit.Collect(ctx, s)
	if err != nil {
		return nil, nil, false, t.requestError(err, "list")
	}
	return meta, nil, false, nil
}

// auditOptions reads the lockfile (updating it first with --update-lock) and the suppressions.
func (a *app) auditOptions(r *auditRun, metas []*audit.Metadata) (*audit.Options, error) {
	opts := &audit.Options{Rules: &audit.Rules{Skip: r.skip}, LockFile: repoRelative(r.lockPath)}
	data, err := regfile.ReadFile(r.lockPath, audit.MaxLockBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		data = nil
	case err != nil:
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("cannot read the lockfile: %v", err), Err: err}
	}
	var lock *audit.Lock
	if data != nil {
		if lock, err = audit.ReadLock(bytes.NewReader(data)); err != nil {
			return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("%s: %v", r.lockPath, err), Hint: "restore it from version control, or delete it and run mcpspec audit --update-lock", Err: err}
		}
	}
	if r.updateLock {
		if lock == nil {
			lock = &audit.Lock{}
		}
		if data, err = a.writeLock(r.lockPath, lock, metas); err != nil {
			return nil, err
		}
	}
	opts.Lock, opts.LockData = lock, data
	if lock == nil {
		fmt.Fprintf(a.io.Stderr, "note: no lockfile at %s, so drift is not checked; run mcpspec audit --update-lock and commit it\n", r.lockPath)
	}
	path, explicit := r.suppressions, r.suppressions != ""
	if !explicit {
		path = defaultSuppressions
	}
	f, err := regfile.OpenLimit(path, audit.MaxSuppressionBytes)
	switch {
	case err == nil:
		defer f.Close()
		sups, err := audit.ReadSuppressions(f, repoRelative(path))
		if err != nil {
			return nil, &Error{Code: ExitConfig, Msg: err.Error(), Hint: "each suppression needs rule, reason and expires (YYYY-MM-DD); server and subject are optional globs", Err: err}
		}
		opts.Suppressions = sups
	case explicit || !errors.Is(err, fs.ErrNotExist):
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("cannot read the suppressions file: %v", err), Err: err}
	}
	return opts, nil
}

// writeLock sets metas' definitions in lock and writes it to path (never through a link),
// as `audit --update-lock` and `init` do; it returns what it wrote.
func (a *app) writeLock(path string, lock *audit.Lock, metas []*audit.Metadata) ([]byte, error) {
	for _, m := range metas {
		lock.Set(m)
	}
	var b bytes.Buffer
	if err := audit.WriteLock(&b, lock); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, &Error{Code: ExitRuntime, Msg: "cannot create the lockfile's directory", Err: err}
	}
	if err := regfile.WriteFile(path, b.Bytes(), 0o644); err != nil {
		if nr := (*regfile.NotRegularError)(nil); errors.As(err, &nr) {
			return nil, &Error{Code: ExitConfig, Msg: err.Error(), Hint: "remove it or point --lockfile at a regular file; the lockfile is never written through a link", Err: err}
		}
		return nil, &Error{Code: ExitRuntime, Msg: "cannot write the lockfile " + path, Err: err}
	}
	fmt.Fprintf(a.io.Stderr, "wrote %s (%s); review and commit it\n", path, lockSummary(metas))
	return b.Bytes(), nil
}

func lockSummary(metas []*audit.Metadata) string {
	var parts []string
	for _, m := range metas {
		parts = append(parts, fmt.Sprintf("%s: %d tools", m.Name, len(m.Tools)))
	}
	return strings.Join(parts, "; ")
}

// repoRelative returns p relative to the root of the git repository it is in (with slashes),
// as SARIF consumers need; p cleaned when there is no repository.
func repoRelative(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.ToSlash(filepath.Clean(p))
	}
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			if rel, err := filepath.Rel(dir, abs); err == nil {
				return filepath.ToSlash(rel)
			}
		}
		if dir == filepath.Dir(dir) {
			break
		}
	}
	return filepath.ToSlash(filepath.Clean(p))
}

// writeAudit renders the report and decides the exit code.
func (a *app) writeAudit(r *auditRun, rep *audit.Report, started time.Time) error {
	failOn := audit.Critical + 1
	failName := "none"
	if r.failOn != nil {
		failOn, failName = *r.failOn, r.failOn.String()
	}
	failing := rep.Failing(failOn)
	var verdict error
	if len(failing) > 0 {
		verdict = &Error{Code: ExitSecurity, Msg: fmt.Sprintf("%d finding(s) at or above --fail-on %s", len(failing), failName),
			Hint: "fix them, or accept a risk in " + defaultSuppressions + " with a reason and an expiry date; --explain shows why each fired"}
	}
	var doc bytes.Buffer
	if audit.WriteJSON(&doc, auditJSON{Report: rep, FailOn: failName, Failing: len(failing), ExitCode: exitCodeOf(context.Background(), verdict)}) == nil {
		server := r.f.Server
		if server == "" {
			server = strings.Join(r.metadata, " ")
		}
		a.keepRun("audit", server, doc.Bytes(), map[string]float64{history.FigureFindings: float64(len(rep.Findings))})
	}
	render := func(w io.Writer) error {
		switch r.format {
		case "json":
			return audit.WriteJSON(w, auditJSON{Report: rep, FailOn: failName, Failing: len(failing), ExitCode: exitCodeOf(context.Background(), verdict)})
		case "sarif":
			return audit.WriteSARIF(w, rep, &audit.SARIFOptions{ToolVersion: buildVersion(), Category: r.category})
		case "console":
			return audit.WriteConsole(w, rep, &audit.ConsoleOptions{Explain: r.explain, FailOn: r.failOn})
		}
		rp, err := reporters.New(r.format, &reporters.Options{Title: "mcpspec audit"})
		if err != nil {
			return err
		}
		return rp.Report(w, audit.ToRun(rep, failOn, started, time.Since(started)))
	}
	var err error
	if r.output != "" {
		err = a.writeFileWith(r.output, render)
		if err == nil && r.format != "console" {
			fmt.Fprintf(a.io.Stderr, "%s; report written to %s\n", strings.TrimPrefix(summaryOf(rep), "findings: "), r.output)
		}
	} else {
		err = render(a.io.Stdout)
	}
	if err != nil {
		return err
	}
	return verdict
}

func summaryOf(rep *audit.Report) string {
	c := rep.Counts()
	return fmt.Sprintf("findings: %d critical, %d high, %d medium, %d low, %d info", c[audit.Critical], c[audit.High], c[audit.Medium], c[audit.Low], c[audit.Info])
}

// writeFileWith creates path (and its directory) and writes it with fn, through the masking
// writer every output goes through.
func (a *app) writeFileWith(path string, fn func(io.Writer) error) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return &Error{Code: ExitConfig, Msg: "cannot create the directory of " + path, Err: err}
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return &Error{Code: ExitConfig, Msg: "cannot create " + path, Err: err}
	}
	w := redact.NewWriter(f, a.masker)
	err = fn(w)
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// listRules prints the catalog as a table.
func listRules(w io.Writer) error {
	rows := [][]string{{"RULE", "MODE", "SEVERITY", "WHAT IT FINDS"}}
	for _, r := range audit.Catalog() {
		rows = append(rows, []string{r.ID, string(r.Mode), r.Severity.String(), r.Summary})
	}
	return table(w, rows)
}

// explainAudit prints what audit does.
func explainAudit(w io.Writer, r *auditRun) error {
	var b strings.Builder
	b.WriteString("mcpspec audit reads what a server says about itself and reports security problems, each with its evidence and a fix.\n\nSteps:\n")
	n := explainServer(&b, r.f, 1)
	if r.mode == audit.ActiveMode {
		fmt.Fprintf(&b, "  %d. Active mode: call the tools matching --allow-tools (read-only ones only, unless --allow-write) with probe arguments, at most --max-calls in all; a spawned server runs in a temporary working directory and HOME.\n", n)
	} else {
		fmt.Fprintf(&b, "  %d. List tools, prompts, resources and resource templates (every page) and read the instructions. No tool is called, nothing is fetched.\n", n)
	}
	n++
	fmt.Fprintf(&b, "  %d. Run the rules below over every string, compare with the lockfile %s, apply the suppressions.\n", n, r.lockPath)
	fmt.Fprintf(&b, "  %d. Print the report (--format %s); exit 6 when a finding reaches --fail-on.\n\nRules:\n", n+1, r.format)
	io.WriteString(w, b.String())
	return listRules(w)
}
