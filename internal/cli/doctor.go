package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/analyze/audit"
	"github.com/mcpspec/mcpspec/baseline"
	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/internal/hint"
	"github.com/mcpspec/mcpspec/internal/regfile"
	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/runner"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// defaultStaleAfter is the age from which doctor calls an entry of .mcpspec/runs/ stale.
const defaultStaleAfter = 14 * 24 * time.Hour

// The marks of a doctor check.
const (
	checkOK   = "ok"   // ✓
	checkWarn = "warn" // !: advice; the exit code stays 0
	checkFail = "fail" // ✗: something is broken; exit 1
)

// doctorCheck is one line of the checklist.
type doctorCheck struct {
	Check  string `json:"check"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	// Fix is the one-line next step of a warn or fail.
	Fix string `json:"fix,omitempty"`
}

// doctorReport is `mcpspec doctor --json` (schema/doctor.v1.json).
type doctorReport struct {
	Checks   []doctorCheck `json:"checks"`
	Failed   int           `json:"failed"`
	Warnings int           `json:"warnings"`
	ExitCode ExitCode      `json:"exitCode"`
}

func (r *doctorReport) add(c doctorCheck) { r.Checks = append(r.Checks, c) }

func (a *app) doctorCommand() *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "check a project's setup: the server's runtime and handshake, collections, baselines, runs, lockfile",
		UsageText: "mcpspec doctor [--server SPEC] [FILE|DIR…] [--stale-after D] [--json]\n\n" +
			"A checklist, one line per check, ✓ fine, ! advice, ✗ broken, each ! and ✗ with a one-line fix:\n" +
			"  runtime      the server's program is on PATH (the first word of a command SPEC)\n" +
			"  handshake    the server starts and completes the MCP handshake (its stderr when not)\n" +
			"  collections  the collections load and validate (default: collections/)\n" +
			"  baseline     .mcpspec/baselines/BRANCH.json exists for this git branch (else \"default\")\n" +
			"  runs         no entry of .mcpspec/runs/ is older than --stale-after\n" +
			"  lockfile     the server's tools, prompts and resources match .mcpspec/tools.lock\n" +
			"The servers are --server, else those of the collections.\n\n" +
			"Exit codes: 0 no ✗ (advice allowed) · 1 a check failed · 3 bad flags · 130 interrupted.",
		Flags: append(serverFlagDefs(),
			&durationFlag{Name: "stale-after", Value: defaultStaleAfter, Usage: "call an entry of .mcpspec/runs/ stale when it is older than `D`"},
		),
		Action: a.doctor,
	}
}

func (a *app) doctor(ctx context.Context, cmd *cli.Command) error {
	f := a.serverFlags(cmd)
	staleAfter := cmd.Duration("stale-after")
	if staleAfter <= 0 {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("--stale-after must be positive, got %s", staleAfter), Hint: "e.g. --stale-after 168h"}
	}
	rep := &doctorReport{}
	paths := cmd.Args().Slice()
	if len(paths) == 0 {
		if fi, err := os.Stat(initCollectionsDir); err == nil && fi.IsDir() {
			paths = []string{initCollectionsDir}
		}
	}
	cols := a.doctorCollections(rep, paths)
	lock, lockErr := a.doctorReadLock()
	if f.Server != "" {
		a.doctorServer(ctx, rep, f, "--server", prepareHook{}, lock)
	} else {
		for _, c := range cols {
			for _, name := range slices.Sorted(maps.Keys(c.Servers)) {
				srv := c.Servers[name]
				s, so := runner.ServerSpec(srv)
				sf := f
				sf.Server = s
				if srv.Timeouts.Connect > 0 {
					sf.ConnectTimeout = srv.Timeouts.Connect
				}
				base := filepath.Dir(c.File)
				hook := prepareHook{spec: func(o *spec.Options) {
					o.Dir, o.Header, o.Env, o.ShutdownGrace = so.Dir, so.Header, so.Env, so.ShutdownGrace
					if o.Dir != "" && !filepath.IsAbs(o.Dir) {
						o.Dir = filepath.Join(base, o.Dir)
					}
					if so.Transport != "" {
						o.Transport = so.Transport
					}
				}}
				a.doctorServer(ctx, rep, sf, fmt.Sprintf("server %q of %s", name, c.File), hook, lock)
			}
		}
		if len(cols) == 0 && len(paths) == 0 {
			rep.add(doctorCheck{Check: "handshake", Status: checkWarn, Detail: "no server to check: no --server and no collection",
				Fix: "mcpspec doctor --server SPEC, or start a collection: mcpspec init --server SPEC"})
		}
	}
	doctorLockfile(rep, lock, lockErr)
	a.doctorBaseline(ctx, rep)
	doctorRuns(rep, staleAfter, time.Now())
	for _, c := range rep.Checks {
		switch c.Status {
		case checkFail:
			rep.Failed++
		case checkWarn:
			rep.Warnings++
		}
	}
	if rep.Failed > 0 {
		rep.ExitCode = ExitFailure
	}
	if f.JSON {
		if err := writeJSON(a.io.Stdout, rep); err != nil {
			return err
		}
	} else {
		a.writeDoctor(rep)
	}
	if rep.Failed > 0 {
		return &Error{Code: ExitFailure, Quiet: true, Msg: fmt.Sprintf("%d checks failed", rep.Failed)}
	}
	return ctx.Err()
}

// writeDoctor prints the checklist.
func (a *app) writeDoctor(rep *doctorReport) {
	marks := map[string]string{checkOK: "✓", checkWarn: "!", checkFail: "✗"}
	for _, c := range rep.Checks {
		// Details and fixes may quote the server (its stderr, its tools' names): cleaned.
		fmt.Fprintf(a.io.Stdout, "%s %-11s %s\n", marks[c.Status], c.Check, oneLine(textfmt.Clean(c.Detail)))
		if c.Fix != "" {
			indent := strings.Repeat(" ", 14)
			fmt.Fprintf(a.io.Stdout, "%sfix: %s\n", indent, strings.ReplaceAll(strings.TrimRight(textfmt.Clean(c.Fix), "\n"), "\n", "\n"+indent+"  "))
		}
	}
	switch {
	case rep.Failed > 0:
		fmt.Fprintf(a.io.Stdout, "%d of %d checks failed, %d with advice.\n", rep.Failed, len(rep.Checks), rep.Warnings)
	case rep.Warnings > 0:
		fmt.Fprintf(a.io.Stdout, "No check failed; %d with advice.\n", rep.Warnings)
	default:
		fmt.Fprintln(a.io.Stdout, "All checks passed.")
	}
}

// doctorCollections loads the collections (as validate does) and records the result.
func (a *app) doctorCollections(rep *doctorReport, paths []string) []*collection.Collection {
	if len(paths) == 0 {
		rep.add(doctorCheck{Check: "collections", Status: checkWarn, Detail: "no collection given, and no collections/ directory here",
			Fix: "start one: mcpspec init --server SPEC"})
		return nil
	}
	lo := (&runner.Options{LookupEnv: os.LookupEnv}).LoadOptions()
	lo.Masker = a.masker
	cols, err := loadCollections(paths, lo, "validate")
	if err != nil {
		var e *Error
		detail, fix := err.Error(), "mcpspec validate "+strings.Join(paths, " ")
		if errors.As(err, &e) {
			detail = strings.TrimSpace(e.Error() + " " + firstErrLine(e.Err))
		}
		rep.add(doctorCheck{Check: "collections", Status: checkFail, Detail: detail, Fix: fix + " shows each problem with file:line"})
		return nil
	}
	tests := 0
	for _, c := range cols {
		tests += len(c.Tests)
	}
	rep.add(doctorCheck{Check: "collections", Status: checkOK, Detail: fmt.Sprintf("%s, %s, valid (%s)", textfmt.Plural(len(cols), "collection"), textfmt.Plural(tests, "test"), strings.Join(paths, " "))})
	return cols
}

// firstErrLine is the first line of err's message, or "".
func firstErrLine(err error) string {
	if err == nil {
		return ""
	}
	return oneLine(err.Error())
}

// doctorServer checks one server: its runtime on PATH, then the handshake and the lockfile.
func (a *app) doctorServer(ctx context.Context, rep *doctorReport, f serverFlags, what string, hook prepareHook, lock *audit.Lock) {
	if argv, err := spec.Split(f.Server); err == nil && len(argv) > 0 && argv[0] != spec.BuiltinName && !strings.Contains(f.Server, "://") {
		prog := argv[0]
		if path, err := exec.LookPath(prog); err != nil {
			rep.add(doctorCheck{Check: "runtime", Status: checkFail, Detail: fmt.Sprintf("%s: %s is not on PATH", what, prog),
				Fix: fmt.Sprintf("install %s or put it on PATH (or name it by its full path in the SPEC)", prog)})
			return
		} else {
			rep.add(doctorCheck{Check: "runtime", Status: checkOK, Detail: fmt.Sprintf("%s: %s is %s", what, prog, path)})
		}
	}
	t, err := a.prepare(f, "doctor", prepareHook{spec: hook.spec, session: auditSessionOptions})
	if err != nil {
		rep.add(doctorCheck{Check: "handshake", Status: checkFail, Detail: fmt.Sprintf("%s: %v", what, err), Fix: hintOf(err, "check the SPEC")})
		return
	}
	s, err := t.open(ctx)
	defer t.finish(err != nil) // a failure's fix points at the stderr file
	if err != nil {
		rep.add(doctorCheck{Check: "handshake", Status: checkFail, Detail: fmt.Sprintf("%s: %v", what, err),
			Fix: hintOf(err, "run the server's command by hand and read its stderr")})
		return
	}
	defer s.Close()
	info := s.ServerInfo()
	rep.add(doctorCheck{Check: "handshake", Status: checkOK, Detail: fmt.Sprintf("%s: %s %s over %s, protocol %s", what, orDash(info.Name), info.Version, t.conn.Transport, s.ProtocolVersion())})
	if lock == nil {
		return
	}
	meta, err := audit.Collect(ctx, s)
	if err != nil {
		rep.add(doctorCheck{Check: "lockfile", Status: checkFail, Detail: fmt.Sprintf("%s: cannot list its tools: %v", what, err), Fix: "mcpspec tools --server SPEC shows the failure"})
		return
	}
	fix := fmt.Sprintf("review the change; if it is meant, mcpspec audit --server %s --update-lock", quoteSpec(f.Server))
	if lock.Servers[meta.Name] == nil {
		rep.add(doctorCheck{Check: "lockfile", Status: checkWarn, Detail: fmt.Sprintf("%s: %s is not pinned in %s", what, meta.Name, audit.DefaultLockPath), Fix: "mcpspec audit --server " + quoteSpec(f.Server) + " --update-lock"})
		return
	}
	drift := audit.Drift(lock, meta)
	if len(drift) == 0 {
		rep.add(doctorCheck{Check: "lockfile", Status: checkOK, Detail: fmt.Sprintf("%s: no drift from %s (%d tools)", what, audit.DefaultLockPath, len(meta.Tools))})
		return
	}
	msgs := make([]string, 0, len(drift))
	for _, d := range drift {
		msgs = append(msgs, d.Message)
	}
	rep.add(doctorCheck{Check: "lockfile", Status: checkFail, Detail: fmt.Sprintf("%s: %d changes since %s: %s", what, len(drift), audit.DefaultLockPath, strings.Join(msgs, "; ")), Fix: fix})
}

// hintOf returns err's hint, else def.
func hintOf(err error, def string) string {
	var e *Error
	if errors.As(err, &e) && e.Hint != "" {
		return e.Hint
	}
	if h := hint.Of(err); h != "" {
		return h
	}
	return def
}

// quoteSpec quotes s for a shell when it has more than one word.
func quoteSpec(s string) string {
	if !strings.ContainsAny(s, " \t'\"$`\\") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// doctorReadLock reads .mcpspec/tools.lock: nil without error when there is none.
func (a *app) doctorReadLock() (*audit.Lock, error) {
	data, err := regfile.ReadFile(audit.DefaultLockPath, audit.MaxLockBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return audit.ReadLock(bytes.NewReader(data))
}

// doctorLockfile records a lockfile that is missing or unreadable (drift is checked per server).
func doctorLockfile(rep *doctorReport, lock *audit.Lock, err error) {
	switch {
	case err != nil:
		rep.add(doctorCheck{Check: "lockfile", Status: checkFail, Detail: fmt.Sprintf("%s: %v", audit.DefaultLockPath, err),
			Fix: "restore it from version control, or delete it and run mcpspec audit --server SPEC --update-lock"})
	case lock == nil:
		rep.add(doctorCheck{Check: "lockfile", Status: checkWarn, Detail: "no " + audit.DefaultLockPath + ": tool definitions are not pinned, so drift goes unnoticed",
			Fix: "mcpspec audit --server SPEC --update-lock, then commit it"})
	}
}

// doctorBaseline checks for the baseline of the current git branch.
func (a *app) doctorBaseline(ctx context.Context, rep *doctorReport) {
	name := defaultBaselineName(&result.Run{Git: gitInfo(ctx)})
	path, err := baseline.Path(".", name)
	if err != nil {
		rep.add(doctorCheck{Check: "baseline", Status: checkWarn, Detail: fmt.Sprintf("branch %q makes no baseline name: %v", name, err), Fix: "mcpspec test --save-baseline=NAME"})
		return
	}
	if _, err := os.Stat(path); err != nil {
		rep.add(doctorCheck{Check: "baseline", Status: checkWarn, Detail: fmt.Sprintf("no baseline for %q (%s), so runs are not compared", name, path),
			Fix: "mcpspec test --save-baseline (saves it under the branch's name)"})
		return
	}
	rep.add(doctorCheck{Check: "baseline", Status: checkOK, Detail: fmt.Sprintf("baseline %q is %s", name, path)})
}

// days writes d in whole days when it is one, else as a duration.
func days(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return textfmt.Plural(int(d/(24*time.Hour)), "day")
	}
	return d.String()
}

// doctorRuns looks for entries of .mcpspec/runs/ (and of its load/ directory) older than
// staleAfter.
func doctorRuns(rep *doctorReport, staleAfter time.Duration, now time.Time) {
	runs := filepath.FromSlash(baseline.StoreDir + "/runs")
	var stale []string
	for _, dir := range []string{runs, filepath.Join(runs, "load")} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if dir == runs && e.Name() == "load" {
				continue
			}
			fi, err := e.Info()
			if err == nil && now.Sub(fi.ModTime()) > staleAfter {
				stale = append(stale, filepath.Join(dir, e.Name()))
			}
		}
	}
	if len(stale) == 0 {
		rep.add(doctorCheck{Check: "runs", Status: checkOK, Detail: fmt.Sprintf("nothing in %s is older than %s", runs+string(filepath.Separator), days(staleAfter))})
		return
	}
	shown := stale
	if len(shown) > 3 {
		shown = shown[:3]
	}
	more := ""
	if len(stale) > len(shown) {
		more = fmt.Sprintf(" … (%d more)", len(stale)-len(shown))
	}
	rep.add(doctorCheck{Check: "runs", Status: checkWarn, Detail: fmt.Sprintf("%d entries of %s are older than %s", len(stale), runs, days(staleAfter)),
		Fix: "remove them if you no longer need them: rm -r " + strings.Join(shown, " ") + more})
}
