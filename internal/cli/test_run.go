package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpspec/mcpspec/baseline"
	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/internal/redact"
	"github.com/mcpspec/mcpspec/internal/regfile"
	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/reporters"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/runner"
)

// loadCollections loads the paths; problems are a config error listing each at file:line:col.
// verb names the command, for the hint.
func loadCollections(paths []string, lo *collection.LoadOptions, verb string) ([]*collection.Collection, error) {
	l, err := collection.NewLoader(lo)
	if err != nil {
		return nil, &Error{Code: ExitRuntime, Msg: err.Error(), Err: err}
	}
	cols, err := l.LoadAll(paths...)
	if err == nil {
		return cols, nil
	}
	var list collection.ErrorList
	if errors.As(err, &list) && errors.Is(err, collection.ErrInvalid) && !isIOError(err) {
		lines := make([]string, len(list))
		files := map[string]bool{}
		for i, e := range list {
			lines[i] = "  " + e.Error()
			files[e.Pos.File] = true
		}
		where := "the collection"
		if len(files) > 1 {
			where = fmt.Sprintf("%d collections", len(files))
		}
		hint := "fix the lines above, then check with 'mcpspec validate FILE'"
		if verb == "validate" {
			hint = "fix the lines above and run 'mcpspec validate' again"
		}
		return nil, &Error{Code: ExitConfig, Err: err,
			Msg:  fmt.Sprintf("%s in %s:\n%s", textfmt.Plural(len(list), "problem"), where, strings.Join(lines, "\n")),
			Hint: hint}
	}
	var nr *regfile.NotRegularError
	if errors.As(err, &nr) {
		return nil, &Error{Code: ExitConfig, Msg: nr.Error(), Err: err, Hint: "pass collection files (*.yaml) or directories holding them; a collection must be a regular file"}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		msg := fmt.Sprintf("cannot read %s: %v", pe.Path, pe.Err)
		if errors.Is(err, fs.ErrNotExist) {
			msg = fmt.Sprintf("%s: no such file or directory", pe.Path)
		}
		return nil, &Error{Code: ExitConfig, Msg: msg, Err: err, Hint: "pass collection files (*.yaml) or directories holding them"}
	}
	return nil, &Error{Code: ExitConfig, Msg: strings.TrimPrefix(err.Error(), "load collections: "), Err: err, Hint: "pass collection files (*.yaml) or directories holding them"}
}

// isIOError reports whether err holds a file-system error (a missing file) rather than only
// collection problems.
func isIOError(err error) bool {
	var pe *os.PathError
	return errors.As(err, &pe)
}

// testOnce loads, runs, reports and compares once.
func (a *app) testOnce(ctx context.Context, cfg *testConfig) error {
	cols, err := loadIterations(cfg.paths, cfg.load, cfg.data, "test")
	if err != nil {
		if cfg.saveBaseline != nil && cfg.saveBaseline.set && cfg.saveBaseline.name == "" {
			// "--save-baseline main" takes main as a collection path.
			var ce *Error
			if errors.As(err, &ce) && errors.Is(err, fs.ErrNotExist) {
				ce.Hint = "--save-baseline takes its NAME after an = sign: --save-baseline=NAME; " + ce.Hint
			}
		}
		return err
	}
	if (len(cfg.ropts.Tags) > 0 || cfg.ropts.Grep != nil) && !anySelected(&cfg.ropts, cols) {
		return noTestSelected(cfg, cols)
	}
	if cfg.dryRun {
		return a.printPlan(cfg, cols)
	}
	// An audit: block's lockfile or suppressions that cannot be read are a mistake in the
	// configuration, not an error of the server: say so before running anything.
	for _, c := range cols {
		if c.Audit == nil {
			continue
		}
		if err := runner.CheckAudit(c.Audit); err != nil {
			return &Error{Code: ExitConfig, Msg: "audit: block: " + err.Error(),
				Hint: "the lockfile must be a regular file written by mcpspec audit --update-lock (restore it, or delete it and rerun that)", Err: err}
		}
	}
	// A baseline that cannot be read is a mistake in the flags: say so before running anything.
	var base *baselineRun
	if cfg.baseline != "" {
		run, path, err := loadBaseline(cfg.baselineDir, cfg.baseline)
		if err != nil {
			return baselineError(cfg.baselineDir, cfg.baseline, err)
		}
		base = &baselineRun{run: run, path: path}
	}
	return a.runAndReport(ctx, cfg, cols, base)
}

// baselineRun is the baseline a run is compared with, read before the run starts (so saving
// the run under the same name cannot make it its own baseline).
type baselineRun struct {
	run  *result.Run
	path string
}

// runAndReport runs the collections, writes every report (also after an interruption), saves
// the run, handles baselines and decides the exit code.
func (a *app) runAndReport(ctx context.Context, cfg *testConfig, cols []*collection.Collection, base *baselineRun) error {
	reps, err := a.openReporters(cfg.reporters)
	if err != nil {
		return err
	}
	defer closeReporters(reps)
	var streamers []reporters.Streamer
	for _, r := range reps {
		if s, ok := r.rep.(reporters.Streamer); ok {
			streamers = append(streamers, s)
		}
	}
	ropts := cfg.ropts
	ropts.Git = gitInfo(ctx)
	ropts.OnEvent = func(e result.Event) {
		for _, s := range streamers {
			s.Event(e)
		}
	}
	// The stderr files of the previous run go; this run's replace them.
	if old, _ := filepath.Glob(filepath.Join(runStderrDir, "*.stderr.log")); len(old) > 0 {
		for _, f := range old {
			_ = os.Remove(f)
		}
	}
	if err := os.MkdirAll(runStderrDir, 0o700); err != nil {
		ropts.StderrDir = ""
	}
	run, runErr := runner.New(&ropts).Run(ctx, cols)
	if runErr == nil && !cfg.skipLoad {
		// A collection's load: block runs after its tests; its thresholds are test cases.
		run.Collections = append(run.Collections, a.runLoadBlocks(ctx, cols)...)
	}
	if runErr == nil && run.OK() && !run.Interrupted && !cfg.keepStderr {
		// Nothing to look into: the servers' stderr files go (--keep-stderr keeps them).
		dropStderrFiles(run)
	}
	// The servers wrote their stderr files themselves: what they printed of the run's secrets
	// (an env entry, a token they were given) is masked before anyone shares the files.
	if kept, _ := filepath.Glob(filepath.Join(runStderrDir, "*.stderr.log")); len(kept) > 0 {
		for _, f := range kept {
			_ = redact.MaskFile(f, a.masker)
		}
	}

	// Reports first: nothing of a partial run is lost.
	problems := writeReports(reps, run)
	if _, err := baseline.SaveLatest(".", run, a.masker); err != nil {
		problems = append(problems, err)
	}
	a.keepRun("test", runServers(run), jsonBytes(run), testFigures(run))
	notes := a.noteWriter(cfg)
	if cfg.saveBaseline != nil && cfg.saveBaseline.set {
		name := cfg.saveBaseline.name
		if name == "" {
			name = defaultBaselineName(run)
		}
		p, err := saveBaseline(cfg.baselineDir, name, run, a.masker)
		if err != nil {
			problems = append(problems, err)
		} else {
			fmt.Fprintf(notes, "Saved baseline %s (%s)\n", savedName(name, p), p)
		}
	}
	var regressed error
	if base != nil && runErr == nil {
		regressed = a.compareWithBaseline(notes, cfg, base, run)
	}

	switch {
	case errors.Is(runErr, runner.ErrInterrupted):
		return &Error{Code: ExitInterrupted, Msg: "interrupted: the reports hold the tests that ran", Err: runErr}
	case runErr != nil:
		var ce *runner.ConnectError
		if errors.As(runErr, &ce) {
			return &Error{Code: ExitConnection, Msg: ce.Error(),
				Hint: "no test reached a server; the report shows why under the first test of each server", Err: runErr}
		}
		return &Error{Code: ExitRuntime, Msg: runErr.Error(), Err: runErr}
	case len(problems) > 0:
		return &Error{Code: ExitRuntime, Msg: errors.Join(problems...).Error(), Err: problems[0]}
	case regressed != nil:
		return regressed
	case !run.OK():
		c := run.Counts()
		return &Error{Code: ExitFailure, Msg: fmt.Sprintf("%d of %s did not pass (%d failed, %d errored)", c.Failed+c.Errored, textfmt.Plural(c.Total, "test"), c.Failed, c.Errored)}
	case cfg.step != nil && cfg.step.wasAborted():
		return &Error{Code: ExitInterrupted, Msg: "aborted at the step prompt: the reports hold the tests that ran"}
	case run.Interrupted:
		return &Error{Code: ExitFailure, Msg: "the run stopped early"}
	case cfg.ropts.Strict && run.Findings() > 0:
		// Every test passed, but a server sent something after its last test (a second answer).
		return &Error{Code: ExitFailure, Msg: fmt.Sprintf("the servers sent %s after their last tests that answered no request (--strict)", textfmt.Plural(run.Findings(), "message")),
			Hint: "the report lists them under the collection; a server must answer each request once"}
	}
	return coverageError(run, cfg.minCoverage)
}

// coverageError is the failure of a run that exercised less than min % of what its servers
// advertised (min < 0: not checked).
func coverageError(run *result.Run, min float64) error {
	if min < 0 {
		return nil
	}
	e, a := run.Coverage()
	if a == 0 {
		known := false
		for _, c := range run.Collections {
			known = known || (c != nil && c.Coverage != nil)
		}
		if !known {
			return &Error{Code: ExitFailure, Msg: "--min-coverage: no coverage is known: no server listed its tools, prompts or resources",
				Hint: "check that the servers connect and answer tools/list"}
		}
		return nil
	}
	if got := result.Percent(e, a); got < min {
		return &Error{Code: ExitFailure, Msg: fmt.Sprintf("coverage %.1f%% (%d of %d advertised tools, prompts and resources exercised) is below --min-coverage %g%%", got, e, a, min),
			Hint: "the report lists what was never exercised; add tests for it, or lower --min-coverage"}
	}
	return nil
}

// dropStderrFiles removes the stderr files of a run's servers and forgets their paths, so no
// report points at a file that is gone.
func dropStderrFiles(run *result.Run) {
	for i := range run.Collections {
		for j := range run.Collections[i].Servers {
			srv := &run.Collections[i].Servers[j]
			if srv.StderrPath != "" {
				_ = os.Remove(srv.StderrPath)
				srv.StderrPath = ""
			}
		}
	}
	if left, _ := filepath.Glob(filepath.Join(runStderrDir, "*.stderr.log")); len(left) > 0 {
		for _, f := range left {
			_ = os.Remove(f) // sessions opened after the first of each server
		}
	}
}

// anySelected reports whether the --tag and --grep filters select at least one test.
func anySelected(o *runner.Options, cols []*collection.Collection) bool {
	for _, c := range cols {
		if slices.ContainsFunc(c.Tests, o.Selects) {
			return true
		}
	}
	return false
}

// noTestSelected is the error of a --tag or --grep that matched no test: a typo in a filter
// must not pass as a green run.
func noTestSelected(cfg *testConfig, cols []*collection.Collection) error {
	var filters []string
	for _, t := range cfg.ropts.Tags {
		filters = append(filters, "--tag "+t)
	}
	if cfg.ropts.Grep != nil {
		filters = append(filters, "--grep "+cfg.ropts.Grep.String())
	}
	tags := map[string]bool{}
	for _, c := range cols {
		for _, t := range c.Tests {
			for _, tag := range t.Tags {
				tags[tag] = true
			}
		}
	}
	hint := "the collections tag no test; drop --tag"
	if len(tags) > 0 {
		hint = "tags in the collections: " + listNames(slices.Sorted(maps.Keys(tags)), 20)
	}
	if len(cfg.ropts.Tags) == 0 {
		hint = "--grep matches test names and ids (Go RE2 syntax, case-sensitive: (?i) ignores case)"
	}
	return &Error{Code: ExitConfig, Msg: fmt.Sprintf("no test matches %s", strings.Join(filters, " ")), Hint: hint}
}

// noteWriter is where baseline messages go: stdout when it carries the console report (or
// nothing), else stderr so a JSON or XML document on stdout stays clean.
func (a *app) noteWriter(cfg *testConfig) io.Writer {
	for _, r := range cfg.reporters {
		if r.path == "" && r.stream != reporters.StreamsProgress {
			return a.io.Stderr
		}
	}
	return a.io.Stdout
}

// compareWithBaseline prints the diff of run against the baseline and returns an exit-1 error
// on a regression.
func (a *app) compareWithBaseline(w io.Writer, cfg *testConfig, base *baselineRun, run *result.Run) error {
	diff := baseline.Compare(base.run, run, &baseline.CompareOptions{IgnoreLatency: cfg.ignoreLatency})
	fmt.Fprintln(w)
	if err := diff.WriteText(w); err != nil {
		return &Error{Code: ExitRuntime, Msg: err.Error(), Err: err}
	}
	if diff.Regressed() {
		return &Error{Code: ExitFailure, Msg: fmt.Sprintf("regressed against baseline %q (%s)", cfg.baseline, base.path),
			Hint: "fix the regression, or accept the change with --save-baseline=" + cfg.baseline}
	}
	return nil
}
