package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/internal/redact"
	"github.com/mcpspec/mcpspec/runner"
)

// IO is what a run of mcpspec may touch of its process: the standard streams and where to find
// itself and temporary space.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Executable is the path of the mcpspec binary, used to start the built-in server for
	// --server testserver ("" = os.Executable()).
	Executable string
	// TempDir is where temporary files go ("" = os.TempDir()).
	TempDir string
	// Abort, when closed, kills the servers' process trees at once instead of shutting them
	// down gracefully (a second Ctrl-C); nil never.
	Abort <-chan struct{}
	// NoHistory keeps no run directory under .mcpspec/runs/<kind>/ and leaves the history
	// database alone, as --no-history does: tests that run verbs in-process set it, so that
	// nothing is written into the working directory (the package's source).
	NoHistory bool
	// Step, when set, answers `mcpspec test --step` before each test instead of a prompt on
	// the terminal (the web UI's stepper); mask masks this run's secrets in what it shows.
	Step func(ctx context.Context, next runner.StepInfo, mask func(string) string) runner.StepAction
}

// Main runs mcpspec with the process's arguments and streams and exits with its exit code.
// SIGINT and SIGTERM cancel the run; open sessions are closed (child servers are stopped) and
// the exit code is 130. A second signal kills the servers at once; should the run still not
// end within abortWait, mcpspec exits anyway. On Linux, mcpspec is the child subreaper of
// what it starts, and kills whatever is still parented to it when it ends.
func Main() {
	os.Exit(int(mainCode()))
}

// abortWait is how long mcpspec waits for the run to end after a second interrupt.
const abortWait = 2 * time.Second

func mainCode() ExitCode {
	becomeSubreaper()
	defer killOrphans()
	ctx, abort, stop := interrupts(context.Background())
	defer stop()
	done := make(chan ExitCode, 1)
	go func() {
		done <- Run(ctx, os.Args, &IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Abort: abort})
	}()
	select {
	case code := <-done:
		return code
	case <-abort:
	}
	t := time.NewTimer(abortWait)
	defer t.Stop()
	select {
	case code := <-done:
		return code
	case <-t.C:
		fmt.Fprintf(os.Stderr, "Error: interrupted twice, and the run did not end within %s: exiting now\n", abortWait)
		return ExitInterrupted
	}
}

// Run runs mcpspec with args (args[0] is the program name) and returns the exit code. Failures
// are printed to io.Stderr with a hint. Cancelling ctx interrupts the run (exit 130). Every
// secret a verb learns of (see [redact.Masker]) is masked on io.Stdout and io.Stderr.
func Run(ctx context.Context, args []string, stdio *IO) ExitCode {
	a := newApp(stdio)
	defer a.flush()
	root := a.root()
	err := root.Run(ctx, args)
	code := exitCodeOf(ctx, err)
	a.finishRun(ctx, code, root.Bool("no-history"))
	if err == nil {
		return ExitOK
	}
	if code == ExitInterrupted && ctx.Err() != nil {
		err = &Error{Code: code, Msg: fmt.Sprintf("interrupted (%v)", context.Cause(ctx)), Err: err}
	}
	report(a.io.Stderr, err, code, root.Bool("json-errors") || slices.Contains(args, "--json-errors"))
	return code
}

// app holds what every verb needs; verbs are its methods, one file each.
type app struct {
	// io is what verbs read and write: its Stdout and Stderr mask every secret in masker.
	io IO
	// term is the process's own streams, unmasked: for telling whether stdout is a terminal,
	// and for the testserver verb, whose stdout is the MCP channel.
	term IO
	// masker holds every secret of this invocation: the collections' and those of the server
	// flags (--header, --server-env, the SPEC's URL and command line).
	masker *redact.Masker
	// stdout and stderr are io's masking writers, flushed when the invocation ends.
	stdout, stderr *redact.Writer
	// started is when the invocation began; kept is its run for the history, handed over by
	// the verb (nil: nothing to keep). See history_record.go.
	started time.Time
	kept    *keptRun
}

func newApp(stdio *IO) *app {
	a := &app{term: *stdio, io: *stdio, masker: redact.NewMasker(), started: time.Now()}
	a.stdout, a.stderr = redact.NewWriter(stdio.Stdout, a.masker), redact.NewWriter(stdio.Stderr, a.masker)
	a.io.Stdout, a.io.Stderr = a.stdout, a.stderr
	return a
}

// flush writes what the masking writers hold back (the start of a possible secret that did not
// turn out to be one): at the end, and before a pause such as an interactive prompt.
func (a *app) flush() {
	_ = a.stdout.Flush()
	_ = a.stderr.Flush()
}

// verbs lists mcpspec's commands, in the order --help shows them.
func (a *app) verbs() []*cli.Command {
	return []*cli.Command{
		a.toolsCommand(),
		a.tokensCommand(),
		a.docsCommand(),
		a.retrievalCommand(),
		a.scoreCommand(),
		a.callCommand(),
		a.readCommand(),
		a.promptCommand(),
		a.completeCommand(),
		a.requestCommand(),
		a.inspectCommand(),
		a.testCommand(),
		a.probeCommand(),
		a.deadlockCommand(),
		a.raceCommand(),
		a.headOfLineCommand(),
		a.validateCommand(),
		a.ciInitCommand(),
		a.baselineCommand(),
		a.compareCommand(),
		a.historyCommand(),
		a.loadCommand(),
		a.benchCommand(),
		a.reportCommand(),
		a.mergeCommand(),
		a.scenariosCommand(),
		a.auditCommand(),
		a.fuzzCommand(),
		a.initCommand(),
		a.doctorCommand(),
		a.schemaCommand(),
		a.testserverCommand(),
		a.mcpCommand(),
		a.proxyCommand(),
		a.recordCommand(),
		a.mockCommand(),
		a.uiCommand(),
		a.versionCommand(),
	}
}

const rootDescription = `mcpspec tests Model Context Protocol servers over stdio, Streamable HTTP, HTTP+SSE,
WebSocket and TCP, and classifies every failure (Crash, Deadlock, Hang, Timeout,
Disconnected, Malformed, ProtocolError, ServerError, Cancelled).

A server SPEC (--server) is a command line ("python -m my_server"), "testserver" for the
built-in reference server, or a URL: http(s)://… (Streamable HTTP, falling back to
HTTP+SSE), ws(s)://…, tcp://host:port.

Exit codes: 0 ok · 1 failure (tool isError, failed test) · 2 runtime error · 3 bad input ·
4 connection error · 5 timeout or hang · 6 security findings · 7 validation error
(reserved) · 8 not tested: nothing was exercised · 130 interrupted.`

func (a *app) root() *cli.Command {
	root := &cli.Command{
		Name:        "mcpspec",
		Usage:       "test MCP servers: calls, collections, load and bug hunting over every transport",
		Version:     buildVersion(),
		Description: rootDescription,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json-errors", Usage: "on failure, also print one line of JSON on stderr: {error, category, exitCode, hint}"},
			&cli.BoolFlag{Name: "no-history", Usage: "keep no run directory under .mcpspec/runs/ and leave the history database alone (also " + envNoHistory + "=1)"},
		},
		Commands:                        a.verbs(),
		Reader:                          a.io.Stdin,
		Writer:                          a.io.Stdout,
		ErrWriter:                       a.io.Stderr,
		DisableSliceFlagSeparator:       true,
		HideHelpCommand:                 true,
		EnableShellCompletion:           true,
		ConfigureShellCompletionCommand: a.configureCompletion,
		// Exit codes are decided by Run, never by the flag library.
		ExitErrHandler: func(context.Context, *cli.Command, error) {},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Present() {
				name := cmd.Args().First()
				return &Error{Code: ExitConfig, Msg: fmt.Sprintf("unknown command %q", name),
					Hint: withSuggestion(commandHint(name, cmd.Commands), "run 'mcpspec --help' to list the commands")}
			}
			return cli.ShowRootCommandHelp(cmd)
		},
	}
	var setUsage func(c *cli.Command)
	setUsage = func(c *cli.Command) {
		if c.OnUsageError == nil {
			c.OnUsageError = func(ctx context.Context, cmd *cli.Command, err error, _ bool) error {
				return usageError(cmd, err)
			}
		}
		for _, sub := range c.Commands {
			setUsage(sub)
		}
	}
	setUsage(root)
	return root
}
