package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/internal/cli/ui"
)

// uiCommand is `mcpspec ui`: the web UI.
func (a *app) uiCommand() *cli.Command {
	return &cli.Command{
		Name:  "ui",
		Usage: "open the web UI: servers, inspector, collections, load, detectors, audit, score, history",
		UsageText: "mcpspec ui [--addr 127.0.0.1:6274] [--allow FILE] [--no-open] [--allow-remote]\n\n" +
			"Serves the UI on loopback and prints its URL, which carries a random token that every\n" +
			"request needs. The UI starts only the servers of the collections under the working\n" +
			"directory, those listed in --allow FILE (one SPEC a line), and testserver.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: ui.DefaultAddr, Usage: "listen on `HOST:PORT` (port 0 picks a free one); loopback only unless --allow-remote"},
			&cli.BoolFlag{Name: "allow-remote", Usage: "allow a non-loopback --addr (anyone who reaches it with the token can start the project's servers)"},
			&cli.StringFlag{Name: "allow", Usage: "also allow the servers of `FILE`: one SPEC a line, # comments"},
			&cli.BoolFlag{Name: "no-open", Usage: "do not open a browser; only print the URL"},
		},
		Action: a.ui,
	}
}

func (a *app) ui(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Present() {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("ui takes no arguments, got %q", cmd.Args().First()),
			Hint: "run mcpspec ui in the project's directory: it lists the collections found there"}
	}
	dir, err := os.Getwd()
	if err != nil {
		return &Error{Code: ExitRuntime, Msg: err.Error(), Err: err}
	}
	srv, err := ui.New(ui.Options{
		Addr: cmd.String("addr"), AllowRemote: cmd.Bool("allow-remote"), Dir: dir, AllowFile: cmd.String("allow"),
		Executable: a.io.Executable, TempDir: a.io.TempDir, Log: a.io.Stderr,
		Exec: a.execVerb, ExecStep: a.execVerbStep, History: uiHistory{dir: dir},
	})
	if err != nil {
		var ae *ui.AddrError
		if errors.As(err, &ae) {
			return &Error{Code: ExitConfig, Msg: err.Error(), Hint: "use --addr 127.0.0.1:PORT, or add --allow-remote"}
		}
		return &Error{Code: ExitConfig, Msg: err.Error(), Err: err}
	}
	ln, err := srv.Listen()
	if err != nil {
		return &Error{Code: ExitRuntime, Msg: fmt.Sprintf("cannot listen on %s: %v", cmd.String("addr"), err),
			Hint: "another program holds the port: pick another with --addr 127.0.0.1:0", Err: err}
	}
	url := srv.URL(ln)
	fmt.Fprintf(a.io.Stdout, "mcpspec ui: %s\n", url)
	fmt.Fprintln(a.io.Stdout, "(the URL carries the access token; Ctrl-C stops the UI and every server it started)")
	a.flush()
	if !cmd.Bool("no-open") && isTerminal(a.term.Stdout) {
		openBrowser(ctx, url, a.io.Stderr)
	}
	if err := srv.Serve(ctx, ln); err != nil {
		return &Error{Code: ExitRuntime, Msg: err.Error(), Err: err}
	}
	if ctx.Err() != nil {
		return &Error{Code: ExitInterrupted, Msg: "interrupted", Quiet: true, Err: ctx.Err()}
	}
	return nil
}

// execVerb runs one verb for the UI in this process, with the streams given: the UI's runs
// take the very code paths (and write the very run directories) the command line does.
func (a *app) execVerb(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return int(Run(ctx, append([]string{"mcpspec"}, args...), &IO{
		Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr,
		Executable: a.io.Executable, TempDir: a.io.TempDir, Abort: a.io.Abort,
	}))
}

// execVerbStep is execVerb for `mcpspec test --step` run from the UI: step answers before each
// test, in place of the terminal prompt.
func (a *app) execVerbStep(ctx context.Context, args []string, stdout, stderr io.Writer, step ui.StepFunc) int {
	return int(Run(ctx, append([]string{"mcpspec"}, args...), &IO{
		Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr,
		Executable: a.io.Executable, TempDir: a.io.TempDir, Abort: a.io.Abort, Step: step,
	}))
}

// openBrowser asks the desktop to open url, within a few seconds; a failure is only a warning.
func openBrowser(ctx context.Context, url string, warn io.Writer) {
	var name string
	var args []string
	switch runtime.GOOS {
	case "darwin":
		name = "open"
	case "windows":
		name, args = "rundll32", []string{"url.dll,FileProtocolHandler"}
	default:
		if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
			return
		}
		name = "xdg-open"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := exec.CommandContext(ctx, name, append(args, url)...).Run(); err != nil {
		fmt.Fprintf(warn, "warning: could not open a browser (%v): open the URL above yourself\n", err)
	}
}
