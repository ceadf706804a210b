package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/mcpspec/mcpspec/analyze/audit"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// activeFlags are the fence of an active audit.
type activeFlags struct {
	acknowledged bool
	allow        []string
	allowWrite   bool
	dryRun       bool
	maxCalls     int
	maxPerTool   int
}

const activeWarning = `WARNING: active audit. mcpspec will call the allowed tools with probe arguments
(path traversal, template and command injection, invalid and oversized input).
Never run it against production systems or real data.`

// confirmActive enforces --acknowledge-risk, or asks on an interactive terminal.
func (a *app) confirmActive(r *auditRun) error {
	if r.active.acknowledged || r.active.dryRun {
		return nil
	}
	f, ok := a.io.Stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return &Error{Code: ExitConfig, Msg: "active mode needs --acknowledge-risk",
			Hint: "it sends harmful-looking payloads to the allowed tools: run it against a test deployment only, with --acknowledge-risk (or answer the prompt on a terminal); --dry-run prints the plan"}
	}
	fmt.Fprintln(a.io.Stderr, activeWarning)
	fmt.Fprint(a.io.Stderr, "Is this a TEST environment? [y/N] ")
	line, _ := bufio.NewReader(a.io.Stdin).ReadString('\n')
	if ans := strings.ToLower(strings.TrimSpace(line)); ans != "y" && ans != "yes" {
		return &Error{Code: ExitConfig, Msg: "active audit not confirmed", Hint: "nothing was called"}
	}
	return nil
}

// absolutizeArgs makes the words of a stdio SPEC that name existing files or directories
// relative to the current directory absolute, since the server will run elsewhere.
func absolutizeArgs(server string) (string, []string) {
	argv, err := spec.Split(server)
	if err != nil || len(argv) == 0 || argv[0] == spec.BuiltinName {
		return server, nil
	}
	var changed []string
	for i, w := range argv {
		if strings.HasPrefix(w, "-") || filepath.IsAbs(w) || strings.Contains(w, "://") {
			continue
		}
		if _, err := os.Stat(w); err == nil && (strings.ContainsAny(w, `/\`) || i > 0) {
			if abs, err := filepath.Abs(w); err == nil {
				argv[i] = abs
				changed = append(changed, w)
			}
		}
	}
	return spec.Join(argv), changed
}

// dirArgs returns the arguments of a server command (after the program) that are existing
// directories, as absolute paths.
func dirArgs(server string) []string {
	argv, err := spec.Split(server)
	if err != nil || len(argv) < 2 || argv[0] == spec.BuiltinName {
		return nil
	}
	var out []string
	for _, w := range argv[1:] {
		if strings.HasPrefix(w, "-") || strings.Contains(w, "://") || !filepath.IsAbs(w) {
			continue
		}
		if st, err := os.Stat(w); err == nil && st.IsDir() {
			out = append(out, filepath.Clean(w))
		}
	}
	return out
}

func orNoLink(link string) string {
	if link == "" {
		return "no symlink (cannot create one)"
	}
	return link
}

// auditActive runs the active audit: fence checks, a sandbox for a spawned server, the plan
// (printed and nothing called with --dry-run), then the probes.
func (a *app) auditActive(ctx context.Context, r *auditRun) (meta *audit.Metadata, found []audit.Finding, dry bool, err error) {
	if len(r.active.allow) == 0 {
		return nil, nil, false, &Error{Code: ExitConfig, Msg: "active mode needs --allow-tools GLOB",
			Hint: "name the tools that may be called, e.g. --allow-tools 'read_*' --allow-tools echo; --dry-run shows what would be called"}
	}
	if err := a.confirmActive(r); err != nil {
		return nil, nil, false, err
	}
	info, err := spec.Resolve(r.f.Server, &spec.Options{Transport: spec.Transport(r.f.Transport)})
	if err != nil {
		return nil, nil, false, specError(err)
	}
	var sb *audit.Sandbox
	f := r.f
	if info.Transport == spec.Stdio {
		if sb, err = audit.NewSandbox(a.io.TempDir); err != nil {
			return nil, nil, false, &Error{Code: ExitRuntime, Msg: "cannot create the audit sandbox", Err: err}
		}
		defer sb.Close()
		var moved []string
		f.Server, moved = absolutizeArgs(f.Server)
		if len(moved) > 0 {
			fmt.Fprintf(a.io.Stderr, "note: the server runs in a temporary directory; made absolute: %s\n", strings.Join(moved, ", "))
		}
		// The directories on the server's command line are its allowed roots (as for a
		// filesystem server): plant the containment canaries beside and inside them.
		if roots := dirArgs(f.Server); len(roots) > 0 {
			if err := sb.Contain(roots...); err != nil {
				return nil, nil, false, &Error{Code: ExitRuntime, Msg: "cannot plant the containment canaries", Err: err}
			}
			for _, c := range sb.Roots[1:] {
				fmt.Fprintf(a.io.Stderr, "note: root %s: canaries in %s and behind %s (removed afterwards)\n", c.Root, c.Sibling, orNoLink(c.Link))
			}
		}
	}
	t, err := a.prepare(f, "audit", prepareHook{session: auditSessionOptions, spec: func(o *spec.Options) {
		if sb != nil {
			o.Dir = sb.Dir
			// A minimal environment: the caller's tokens stay out; --server-env adds what the
			// server needs.
			o.Env = append(sb.Env(os.Environ()), o.Env...)
			o.OnlyEnv = true
		}
	}})
	if err != nil {
		return nil, nil, false, err
	}
	defer func() { t.finish(err != nil) }()
	var prog *phases
	if !r.active.dryRun {
		prog = a.newPhases("audit", r.quiet)
	}
	defer prog.done()
	prog.step("connecting and listing the tools, prompts and resources")
	s, err := t.open(ctx)
	if err != nil {
		return nil, nil, false, err
	}
	defer s.Close()
	meta, err = audit.Collect(ctx, s)
	if err != nil {
		return nil, nil, false, t.requestError(err, "list")
	}
	opts := &audit.ActiveOptions{Allow: r.active.allow, AllowWrite: r.active.allowWrite, MaxCalls: r.active.maxCalls,
		MaxPerTool: r.active.maxPerTool, Timeout: r.f.Timeout, Sandbox: sb, Progress: prog.detector()}
	if r.active.dryRun {
		plan, err := audit.PlanActive(meta, opts)
		if err != nil {
			return nil, nil, false, &Error{Code: ExitConfig, Msg: err.Error()}
		}
		return meta, nil, true, printPlan(a.io.Stdout, plan, sb)
	}
	found, _, err = audit.Active(ctx, s, meta, opts)
	prog.done()
	if err != nil && !errors.Is(err, context.Canceled) {
		return nil, nil, false, &Error{Code: ExitRuntime, Msg: "active audit failed", Err: err}
	}
	return meta, found, false, err
}

// printPlan prints what an active audit would call.
func printPlan(w io.Writer, p *audit.Plan, sb *audit.Sandbox) error {
	fmt.Fprintf(w, "active audit plan (--dry-run: nothing was called): %d calls\n", len(p.Probes))
	if sb != nil {
		fmt.Fprintf(w, "the server would run in %s with HOME=%s; canary file %s\n", sb.Dir, sb.Home, sb.CanaryPath)
	}
	rows := [][]string{{"TOOL", "RULE", "PROBE"}}
	for _, pr := range p.Probes {
		rows = append(rows, []string{pr.Tool, pr.Kind, truncate(pr.What, 90)})
	}
	if err := table(w, rows); err != nil {
		return err
	}
	for _, s := range p.Skipped {
		fmt.Fprintf(w, "skipped %s: %s\n", s.Tool, s.Reason)
	}
	return nil
}

// withActive merges the active findings into a passive report: suppressed, located and sorted
// like the rest, with the active rules listed.
func withActive(rep *audit.Report, active []audit.Finding, opts *audit.Options, metas []*audit.Metadata) *audit.Report {
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	fs := audit.Suppress(active, opts.Suppressions, now)
	var keep []audit.Finding
	for _, f := range fs {
		if f.Subject.Kind != audit.KindSuppression {
			keep = append(keep, f)
		}
	}
	audit.Locate(keep, opts.LockFile, opts.LockData, metas...)
	rep.Findings = append(rep.Findings, keep...)
	audit.SortFindings(rep.Findings)
	rep.Mode = audit.ActiveMode
	rep.Rules = nil
	for _, r := range audit.Catalog() {
		if opts.Rules.Enabled(r.ID) {
			rep.Rules = append(rep.Rules, r)
		}
	}
	return rep
}
