package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/baseline"
	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/internal/envfile"
	"github.com/mcpspec/mcpspec/internal/regfile"
	"github.com/mcpspec/mcpspec/runner"
	"github.com/mcpspec/mcpspec/session"
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
			&cli.BoolFlag{Name: "strict", Usage: "fail on answers to no request (a second answer, an id never issued, a stray frame), and check every tools/call against the tool's inputSchema before sending (a test with expectError is sent as written) and its outputSchema after"},
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
			&cli.BoolFlag{Name: "step", Usage: "on a terminal, pause before each test: Enter runs it, s skips it, p [NAME] prints variables, set NAME VALUE edits one, q aborts (the reports hold the tests that ran)"},
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

func (o *optionalName) String() string { return o.name }

func (o *optionalName) Get() any { return o.name }

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
	// step is the --step prompt; nil without it.
	step *stepper
	// noHistory is --no-history (a watch records each of its runs itself).
	noHistory bool
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
		noHistory:     cmd.Bool("no-history"),
		minCoverage:   -1,
	}
	if cmd.IsSet("min-coverage") {
		cfg.minCoverage = cmd.Float("min-coverage")
		if cfg.minCoverage < 0 || cfg.minCoverage > 100 {
			return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--min-coverage must be between 0 and 100, got %v", cfg.minCoverage), Hint: "a percentage, e.g. --min-coverage 80"}
		}
	}
	if len(cfg.paths) == 0 {
		if fi, err := os.Stat(initCollectionsDir); err == nil && fi.IsDir() {
			cfg.paths = []string{initCollectionsDir} // where mcpspec init writes
		} else {
			return nil, &Error{Code: ExitConfig, Msg: "no collection given, and no collections/ directory here",
				Hint: "pass collection files or directories (mcpspec test examples/quickstart.yaml), or start one: mcpspec init --server SPEC"}
		}
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
	if cmd.Bool("step") {
		if err := a.checkStep(cfg, a.io.Step != nil); err != nil {
			return nil, err
		}
		cfg.step = a.newStepper()
		cfg.ropts.Step = cfg.step.step
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
