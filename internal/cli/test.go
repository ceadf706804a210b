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
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v3"
	"golang.org/x/term"

	"github.com/mcpspec/mcpspec/baseline"
	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/internal/envfile"
	"github.com/mcpspec/mcpspec/internal/redact"
	"github.com/mcpspec/mcpspec/internal/regfile"
	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/reporters"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/runner"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

// Where `mcpspec test` keeps its state, relative to the working directory.
const (
	defaultBaselineDir = baseline.BaselinesDir
	// runStderrDir keeps the stderr of the servers of the latest run.
	runStderrDir = baseline.StoreDir + "/runs/stderr"
	// watchPoll is how often --watch looks at the collection files.
	watchPoll = 500 * time.Millisecond
)

func (a *app) testCommand() *cli.Command {
	save := &optionalName{}
	return &cli.Command{
		Name:  "test",
		Usage: "run collections of tests against their servers",
		UsageText: "mcpspec test FILE|DIR… [--env NAME] [--var K=V]… [--tag T]… [--grep RE] [--parallel N]\n" +
			"    [--reporter NAME[=PATH]]… [--baseline NAME | --save-baseline[=NAME]] [--watch] [--strict] [--min-coverage PCT]\n\n" +
			"A directory contributes its *.yaml and *.yml files. Reporters: console (default), json,\n" +
			"junit, tap, html, markdown; NAME=PATH writes to a file, NAME alone to stdout. Every run is\n" +
			"saved as .mcpspec/runs/latest.json ('mcpspec baseline save' promotes it). A collection's deadlock:,\n" +
			"race: and head-of-line: blocks run after its tests (not with --tag; --grep selects them by kind).\n\n" +
			"Exit codes: 0 all passed · 1 a test failed, a detector found a bug, a baseline regression or coverage\n" +
			"below --min-coverage · 2 runtime error ·\n" +
			"3 invalid collection or flags · 4 no server could be connected · 130 interrupted (the\n" +
			"reports of the partial run are still written).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "env", Usage: "select the collection environment `NAME` (default: its defaultEnvironment)"},
			&cli.StringSliceFlag{Name: "var", Usage: "set variable `K=V` (repeatable; above --env-file and the environment)"},
			&cli.StringFlag{Name: "env-file", Usage: "read variables from the dotenv file `PATH` (KEY=VALUE lines, # comments, quotes)"},
			&cli.StringSliceFlag{Name: "tag", Usage: "run only tests with tag `T` (repeatable: any of them); their dependencies run too"},
			&cli.StringFlag{Name: "grep", Usage: "run only tests whose name or id matches the regular expression `RE`"},
			&cli.BoolFlag{Name: "bail", Usage: "stop after the first test that fails or errors; the tests not started are skipped"},
			&cli.BoolFlag{Name: "strict", Usage: "fail on answers to no request (a second answer, an id never issued, a stray frame), and check every tools/call against the tool's inputSchema before sending and its outputSchema after"},
			&cli.IntFlag{Name: "parallel", Value: 1, Usage: "run up to `N` independent tests at once (N sessions per server)"},
			&cli.FloatFlag{Name: "rate", DefaultText: "0, no limit", Usage: "send at most `N` requests per second"},
			&cli.StringSliceFlag{Name: "reporter", Aliases: []string{"r"}, Usage: "report as `NAME[=PATH]`: console, json, junit, tap, html, markdown (repeatable)"},
			&cli.BoolFlag{Name: "update", Usage: "rewrite snapshot files instead of comparing with them"},
			&cli.BoolFlag{Name: "skip-load", Usage: "do not run the collections' load: blocks (they run after the tests, writing .mcpspec/runs/load/<id>/)"},
			&cli.BoolFlag{Name: "watch", Usage: "run again whenever a collection file changes (Ctrl-C ends)"},
			&cli.GenericFlag{Name: "save-baseline", Value: save, Usage: "save this run as a baseline: --save-baseline`[=NAME]` (no NAME: the git branch, else \"default\"; write the = sign)"},
			&cli.StringFlag{Name: "baseline", Usage: "compare this run with baseline `NAME`; a regression exits 1"},
			&cli.StringFlag{Name: "baseline-dir", Value: defaultBaselineDir, Usage: "where baselines live (`DIR`)"},
			&cli.BoolFlag{Name: "ignore-latency", Usage: "with --baseline, do not compare latencies (noisy machines)"},
			&durationFlag{Name: "timeout", DefaultText: collection.DefaultCallTimeout.String(), Usage: "default per-request timeout of servers that set no timeouts.call"},
			&durationFlag{Name: "connect-timeout", DefaultText: collection.DefaultConnectTimeout.String(), Usage: "default start/handshake timeout of servers that set no timeouts.connect"},
			&cli.StringFlag{Name: "protocol-version", Usage: "pin the protocol version of servers that pin none (default: detect the era)"},
			&cli.StringFlag{Name: "max-message-size", Value: "16MiB", Usage: "largest message accepted from servers that set no maxMessageSize: bytes or a `SIZE` with a unit (64MiB)"},
			&cli.BoolFlag{Name: "keep-stderr", Usage: "keep the servers' stderr files (.mcpspec/runs/stderr) after a run that passed; a failed run always keeps them"},
			&cli.FloatFlag{Name: "min-coverage", DefaultText: "off", Usage: "fail (exit 1) when less than `PCT` % of the advertised tools, prompts and resources were exercised"},
			&cli.StringFlag{Name: "data", Aliases: []string{"d"}, Usage: "run each collection once per row of `FILE` (CSV with a header row, or a JSON array of objects), the row's values as variables"},
			&cli.StringFlag{Name: "data-key", Usage: "name each --data iteration by the values of `COLUMN` instead of \"row N\""},
			&cli.BoolFlag{Name: "json", Usage: "print the results document on stdout (as --reporter json)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the plan — servers, tests in order, dependencies, blocks — and exit without starting or connecting anything"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error { return a.test(ctx, cmd, save) },
	}
}

// optionalName is a flag value that may be given bare (--save-baseline) or with a value
// (--save-baseline=NAME). As a bool-like flag it never takes the next argument.
type optionalName struct {
	set  bool
	name string
}

func (o *optionalName) Set(s string) error {
	o.set = true
	if s != "true" {
		o.name = s
	}
	if s == "false" {
		o.set, o.name = false, ""
	}
	return nil
}
func (o *optionalName) String() string   { return o.name }
func (o *optionalName) Get() any         { return o.name }
func (o *optionalName) IsBoolFlag() bool { return true }

// testConfig is the validated command line of `mcpspec test`.
type testConfig struct {
	paths         []string
	load          *collection.LoadOptions
	ropts         runner.Options
	reporters     []reporterSpec
	watch         bool
	saveBaseline  *optionalName
	baseline      string
	baselineDir   string
	ignoreLatency bool
	keepStderr    bool
	// minCoverage is --min-coverage in percent; negative when not given.
	minCoverage float64
	skipLoad    bool
	// data is --data (and --data-key): one iteration per row; nil without it.
	data *dataFlags
	// dryRun prints the plan instead of running; json prints it (or the results) as JSON.
	dryRun, json bool
}

// reporterSpec is one --reporter NAME[=PATH].
type reporterSpec struct {
	name, path string
	// stream is what the reporter streams as the run goes (0: nothing).
	stream reporters.StreamKind
}

func (a *app) test(ctx context.Context, cmd *cli.Command, save *optionalName) error {
	cfg, err := a.testConfig(ctx, cmd, save)
	if err != nil {
		return err
	}
	if !cfg.watch {
		return a.testOnce(ctx, cfg)
	}
	return a.watch(ctx, cfg)
}

// testConfig reads and checks the flags; every problem is a config error (exit 3).
func (a *app) testConfig(ctx context.Context, cmd *cli.Command, save *optionalName) (*testConfig, error) {
	cfg := &testConfig{
		paths:         cmd.Args().Slice(),
		watch:         cmd.Bool("watch"),
		baseline:      cmd.String("baseline"),
		baselineDir:   cmd.String("baseline-dir"),
		ignoreLatency: cmd.Bool("ignore-latency"),
		keepStderr:    cmd.Bool("keep-stderr"),
		skipLoad:      cmd.Bool("skip-load"),
		minCoverage:   -1,
	}
	if cmd.IsSet("min-coverage") {
		cfg.minCoverage = cmd.Float("min-coverage")
		if cfg.minCoverage < 0 || cfg.minCoverage > 100 {
			return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--min-coverage must be between 0 and 100, got %v", cfg.minCoverage), Hint: "a percentage, e.g. --min-coverage 80"}
		}
	}
	if len(cfg.paths) == 0 {
		return nil, &Error{Code: ExitConfig, Msg: "no collection given",
			Hint: "pass collection files or directories: mcpspec test examples/quickstart.yaml"}
	}
	cfg.saveBaseline = save
	vars, envFile, err := varFlags(ctx, cmd)
	if err != nil {
		return nil, err
	}
	var grep *regexp.Regexp
	if g := cmd.String("grep"); g != "" {
		if grep, err = regexp.Compile(g); err != nil {
			return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--grep %q is not a regular expression: %v", g, err), Hint: "Go RE2 syntax, e.g. --grep '^login'"}
		}
	}
	parallel := cmd.Int("parallel")
	if parallel < 1 || parallel > 256 {
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--parallel must be between 1 and 256, got %d", parallel), Hint: "e.g. --parallel 4"}
	}
	rate := cmd.Float("rate")
	if rate < 0 {
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--rate must not be negative, got %v", rate), Hint: "e.g. --rate 10 (requests per second)"}
	}
	if v := cmd.String("protocol-version"); v != "" && !slices.Contains(session.SupportedVersions(), v) {
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--protocol-version %q is not a version mcpspec speaks", v), Hint: "one of " + strings.Join(session.SupportedVersions(), ", ")}
	}
	for _, name := range []string{"timeout", "connect-timeout"} {
		if d := cmd.Duration(name); d < 0 {
			return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--%s must be positive, got %s", name, d), Hint: "e.g. --" + name + " 30s"}
		}
	}
	maxMessage, err := parseMaxMessageSize(cmd.String("max-message-size"))
	if err != nil {
		return nil, err
	}
	cfg.dryRun, cfg.json = cmd.Bool("dry-run"), cmd.Bool("json")
	if cfg.dryRun && cfg.watch {
		return nil, &Error{Code: ExitConfig, Msg: "--dry-run and --watch do not go together", Hint: "--dry-run prints the plan once and exits"}
	}
	if cfg.data, err = readDataFlags(cmd); err != nil {
		return nil, err
	}
	entries := cmd.StringSlice("reporter")
	if cfg.json {
		if err := jsonWithReporters(entries); err != nil {
			return nil, err
		}
		entries = append(entries, "json")
	}
	if cfg.reporters, err = parseReporters(entries); err != nil {
		return nil, err
	}
	if cfg.baseline != "" {
		if _, err := baseline.SanitizeName(cfg.baseline); err != nil {
			return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--baseline %q: %v", cfg.baseline, err), Hint: "name a baseline listed by 'mcpspec baseline list'"}
		}
	}
	cfg.ropts = runner.Options{
		Vars:            vars,
		EnvFile:         envFile,
		Environment:     cmd.String("env"),
		LookupEnv:       os.LookupEnv,
		Tags:            cmd.StringSlice("tag"),
		Grep:            grep,
		Bail:            cmd.Bool("bail"),
		Strict:          cmd.Bool("strict"),
		Parallel:        int(parallel),
		RateLimit:       rate,
		UpdateSnapshots: cmd.Bool("update"),
		CallTimeout:     cmd.Duration("timeout"),
		ConnectTimeout:  cmd.Duration("connect-timeout"),
		ProtocolVersion: cmd.String("protocol-version"),
		Executable:      a.io.Executable,
		StderrDir:       runStderrDir,
		MaxMessageSize:  maxMessage,
		Abort:           a.io.Abort,
	}
	cfg.load = cfg.ropts.LoadOptions()
	cfg.load.Masker = a.masker
	return cfg, nil
}

// varFlags reads --var and --env-file (test and validate share them).
func varFlags(ctx context.Context, cmd *cli.Command) (vars, envFile map[string]string, err error) {
	if vars, err = parseVars(cmd.StringSlice("var")); err != nil {
		return nil, nil, err
	}
	if p := cmd.String("env-file"); p != "" {
		if envFile, err = readEnvFile(ctx, p); err != nil {
			return nil, nil, err
		}
	}
	return vars, envFile, nil
}

// parseVars reads --var K=V pairs.
func parseVars(entries []string) (map[string]string, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, e := range entries {
		k, v, ok := strings.Cut(e, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--var %q is not K=V", redactEntry(e)), Hint: "write it as --var userId=42"}
		}
		out[strings.TrimSpace(k)] = v
	}
	return out, nil
}

// maxEnvFileSize bounds an --env-file.
const maxEnvFileSize = 1 << 20

// readEnvFile reads a dotenv file (see package envfile for the conventions). The file may be a
// pipe (--env-file <(sops -d .env)); waiting for it ends with ctx.
func readEnvFile(ctx context.Context, path string) (map[string]string, error) {
	data, err := regfile.ReadInput(ctx, path, maxEnvFileSize)
	if err != nil && !errors.As(err, new(*regfile.TooLargeError)) {
		return nil, inputError(ctx, "--env-file "+path, err, "check the path")
	}
	if err != nil || len(data) > maxEnvFileSize {
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--env-file %s is larger than 1 MiB", path), Hint: "an env file holds KEY=VALUE lines; check the path"}
	}
	vars, err := envfile.Parse(data)
	var se *envfile.SyntaxError
	if errors.As(err, &se) {
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--env-file %s:%d: %s", path, se.Line, se.Msg), Hint: se.Hint, Err: err}
	}
	if err != nil {
		return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("cannot read --env-file %s: %v", path, err), Err: err}
	}
	return vars, nil
}

// inputError describes a file named by a flag (what) that could not be read: interrupted, not
// a regular file or pipe, or unreadable.
func inputError(ctx context.Context, what string, err error, hint string) *Error {
	var nr *regfile.NotRegularError
	switch {
	case ctx.Err() != nil:
		return &Error{Code: ExitInterrupted, Msg: "interrupted while reading " + what, Err: err}
	case errors.As(err, &nr):
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("cannot read %s: %v", what, nr), Hint: "give a regular file (or a pipe, such as <(command))", Err: err}
	}
	return &Error{Code: ExitConfig, Msg: fmt.Sprintf("cannot read %s: %v", what, err), Hint: hint, Err: err}
}

// parseReporters reads --reporter NAME[=PATH] values. Console on stdout is added when no
// reporter writes to stdout (none given, or all to files).
func parseReporters(entries []string) ([]reporterSpec, error) {
	if len(entries) == 0 {
		return []reporterSpec{consoleSpec()}, nil
	}
	var out []reporterSpec
	stdout := 0
	for _, e := range entries {
		name, path, _ := strings.Cut(e, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		rep, err := reporters.New(name, nil)
		if err != nil {
			return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--reporter %q: unknown reporter", e),
				Hint: "use one of: " + strings.Join(reporters.Names(), ", ") + " (NAME or NAME=PATH)", Err: err}
		}
		hasPath := strings.Contains(e, "=")
		path = strings.TrimSpace(path)
		switch {
		case hasPath && path == "":
			return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--reporter %q names no file after the = sign", e),
				Hint: fmt.Sprintf("write --reporter %s=out/report%s for a file, or --reporter %s alone for stdout", name, reporters.Extension(name), name)}
		case path == "":
			stdout++
		}
		for _, prev := range out {
			if path != "" && prev.path != "" && filepath.Clean(prev.path) == filepath.Clean(path) {
				return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--reporter %s=%s and --reporter %s=%s write the same file", prev.name, prev.path, name, path),
					Hint: "give each reporter a file of its own, e.g. --reporter junit=out/junit.xml --reporter json=out/results.json"}
			}
		}
		out = append(out, reporterSpec{name: name, path: path, stream: streamKind(rep)})
	}
	if stdout > 1 {
		return nil, &Error{Code: ExitConfig, Msg: "more than one --reporter writes to stdout",
			Hint: "give every reporter but one a file: --reporter junit=out/junit.xml"}
	}
	if stdout == 0 {
		// Every report goes to a file: the terminal still gets the console's progress and digest.
		out = append(out, consoleSpec())
	}
	return out, nil
}

// consoleSpec is the console reporter on stdout, the default.
func consoleSpec() reporterSpec {
	return reporterSpec{name: "console", stream: streamKind(reporters.NewConsole(nil))}
}

// streamKind is what rep streams as the run goes; 0 when it does not stream.
func streamKind(rep reporters.Reporter) reporters.StreamKind {
	if s, ok := rep.(reporters.Streamer); ok {
		return s.Streams()
	}
	return 0
}

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

// openReporter is one reporter and where its output goes.
type openReporter struct {
	spec   reporterSpec
	rep    reporters.Reporter
	w      io.Writer      // masked: masked for a file, the app's masked stdout otherwise
	file   *os.File       // nil for stdout
	masked *redact.Writer // over file; nil for stdout
}

// openReporters builds the reporters and opens their files (creating parent directories), so a
// streaming reporter can write as the run goes.
func (a *app) openReporters(specs []reporterSpec) ([]*openReporter, error) {
	tty := false
	if f, ok := a.term.Stdout.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	var out []*openReporter
	for _, s := range specs {
		o := &openReporter{spec: s, w: a.io.Stdout}
		if s.path != "" {
			if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
				closeReporters(out)
				return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("cannot write the %s report: cannot create the directory of %s: %v", s.name, s.path, serverconn.Innermost(err)),
					Hint: "give --reporter " + s.name + "=PATH a path whose directories can be created, e.g. " + s.name + "=out/report", Err: err}
			}
			f, err := os.Create(s.path)
			if err != nil {
				closeReporters(out)
				return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("cannot write the %s report to %s: %v", s.name, s.path, serverconn.Innermost(err)),
					Hint: "check that " + s.path + " is a writable file path, or pick another in --reporter " + s.name + "=PATH", Err: err}
			}
			o.file = f
			o.masked = redact.NewWriter(f, a.masker)
			o.w = o.masked
		}
		ropts := &reporters.Options{}
		switch s.stream {
		case reporters.StreamsProgress:
			if s.path == "" {
				ropts.Live = a.io.Stdout
				ropts.TTY = tty
				ropts.Color = tty && os.Getenv("NO_COLOR") == ""
			}
		case reporters.StreamsReport:
			ropts.Live = o.w
		}
		rep, err := reporters.New(s.name, ropts)
		if err != nil {
			closeReporters(append(out, o))
			return nil, &Error{Code: ExitConfig, Msg: err.Error(), Err: err}
		}
		o.rep = rep
		out = append(out, o)
	}
	return out, nil
}

// writeReports renders run with every reporter and closes their files; it returns what failed.
func writeReports(reps []*openReporter, run *result.Run) []error {
	var problems []error
	for _, r := range reps {
		if err := r.rep.Report(r.w, run); err != nil {
			problems = append(problems, fmt.Errorf("write the %s report: %w", r.spec.name, err))
		}
		if r.masked != nil {
			if err := r.masked.Flush(); err != nil {
				problems = append(problems, fmt.Errorf("write %s: %w", r.spec.path, err))
			}
		}
		if r.file != nil {
			if err := r.file.Close(); err != nil {
				problems = append(problems, fmt.Errorf("write %s: %w", r.spec.path, err))
			}
			r.file = nil
		}
	}
	return problems
}

func closeReporters(rs []*openReporter) {
	for _, r := range rs {
		if r.file != nil {
			_ = r.file.Close()
		}
	}
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

	// Reports first: nothing of a partial run is lost.
	problems := writeReports(reps, run)
	if _, err := baseline.SaveLatest(".", run, a.masker); err != nil {
		problems = append(problems, err)
	}
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

// watch runs, then waits for a collection file to change and runs again, until ctx ends. A watch
// ends only by a signal, so it always ends interrupted (exit 130, as docs/exit-codes.md says):
// with the interrupted run's error, or, when Ctrl-C came while waiting, with its own.
func (a *app) watch(ctx context.Context, cfg *testConfig) error {
	for {
		files := watchedFiles(cfg.paths)
		stamp := stamps(files)
		err := a.testOnce(ctx, cfg)
		if ctx.Err() != nil {
			return err
		}
		if err != nil {
			report(a.io.Stderr, err, exitCodeOf(ctx, err), false)
		}
		fmt.Fprintf(a.io.Stderr, "Watching %s for changes (Ctrl-C to stop)…\n", textfmt.Plural(len(files), "file"))
		t := time.NewTicker(watchPoll)
		changed := false
		for !changed {
			select {
			case <-ctx.Done():
				t.Stop()
				return &Error{Code: ExitInterrupted, Msg: "watch stopped", Err: context.Cause(ctx)}
			case <-t.C:
				files = watchedFiles(cfg.paths)
				now := stamps(files)
				changed = !equalStamps(stamp, now)
			}
		}
		t.Stop()
		fmt.Fprintln(a.io.Stderr, "Change detected; running again.")
	}
}

// watchedFiles lists the collection files and directories behind paths.
func watchedFiles(paths []string) []string {
	var out []string
	for _, p := range paths {
		out = append(out, p)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			for _, pat := range []string{"*.yaml", "*.yml"} {
				m, _ := filepath.Glob(filepath.Join(p, pat))
				out = append(out, m...)
			}
		}
	}
	return out
}

// stamps records each file's modification time and size ("" when missing).
func stamps(files []string) map[string]string {
	out := make(map[string]string, len(files))
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			out[f] = fmt.Sprintf("%d/%d", st.ModTime().UnixNano(), st.Size())
		} else {
			out[f] = ""
		}
	}
	return out
}

func equalStamps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
