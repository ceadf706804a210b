package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"
	"golang.org/x/term"

	"github.com/mcpspec/mcpspec/analyze/audit"
	"github.com/mcpspec/mcpspec/detect"
	"github.com/mcpspec/mcpspec/session"
)

// Where `mcpspec init` writes, relative to its DIR. `mcpspec test` with no argument runs
// initCollectionsDir.
const (
	initCollectionsDir = "collections"
	initGitignoreLine  = ".mcpspec/runs/"
)

func (a *app) initCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "server", Aliases: []string{"s"}, OnlyOnce: true, Usage: "the server to test, a `SPEC`: a command line, testserver, or an http(s)://, ws(s)://, tcp:// address (asked for on a terminal)"},
		&cli.StringFlag{Name: "transport", Usage: "force a transport: stdio, http, sse, ws or tcp (default: from the SPEC)"},
		&durationFlag{Name: "timeout", Value: defaultTimeout, Usage: "deadline of each request"},
		&durationFlag{Name: "connect-timeout", Value: defaultConnectTimeout, Usage: "deadline for starting or connecting to the server and the handshake"},
		&cli.StringFlag{Name: "name", Usage: "the collection's `NAME` and file name (default: the server's serverInfo.name)"},
		&cli.StringFlag{Name: "tools", Usage: "test only these tools, `a,b,c` (they are called even when annotated destructive)"},
		&cli.BoolFlag{Name: "include-destructive", Usage: "also test tools annotated destructiveHint (they may delete or overwrite data)"},
		&cli.BoolFlag{Name: "include-open-world", Usage: "also test tools annotated openWorldHint (they reach outside the server)"},
		&cli.BoolFlag{Name: "force", Usage: "overwrite the collection, its snapshots and the lockfile when they exist"},
		&cli.BoolFlag{Name: "interactive", Usage: "ask for the server and the tools on stdin even when it is not a terminal (the default on a terminal without --server)"},
	}
	return &cli.Command{
		Name:  "init",
		Usage: "start a collection for a server: one test per tool, a lockfile, .mcpspec/",
		UsageText: "mcpspec init [DIR] --server SPEC [--tools a,b] [--include-destructive] [--name NAME] [--force]\n\n" +
			"Connects to the server, lists its tools and calls each one once with arguments made up\n" +
			"from its inputSchema, then writes, in DIR (default: the current directory):\n" +
			"  collections/NAME.yaml      one test per tool, with the assertions its answer passes now:\n" +
			"                             isError, the tool's outputSchema, a snapshot\n" +
			"  collections/__snapshots__/ the snapshots (written by a run with --update, then checked)\n" +
			"  .mcpspec/tools.lock        the tools' definitions, as 'mcpspec audit --update-lock' writes\n" +
			"  .gitignore                 gains a line for .mcpspec/runs/\n" +
			"Then 'mcpspec test' (in DIR) runs the collection. Tools annotated destructiveHint or\n" +
			"openWorldHint are left out unless included (and init says which). On a terminal without\n" +
			"--server, init asks for the server and the tools. Nothing is overwritten without --force.\n\n" +
			"Exit codes: 0 written · 2 runtime error · 3 bad flags, or files in the way (--force) ·\n" +
			"4 the server could not be connected · 130 interrupted.",
		Flags:  flags,
		Action: a.init,
	}
}

// initRun is one invocation of init.
type initRun struct {
	dir         string
	f           serverFlags
	name        string
	tools       []string
	sel         detect.Selection
	force       bool
	interactive bool
	in          *bufio.Reader
}

func (a *app) init(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Len() > 1 {
		return usageError(cmd, fmt.Errorf("one DIR at most, got %d arguments", cmd.Args().Len()))
	}
	r := &initRun{
		dir:   ".",
		f:     a.serverFlags(cmd),
		name:  cmd.String("name"),
		force: cmd.Bool("force"),
		sel:   detect.Selection{IncludeDestructive: cmd.Bool("include-destructive"), IncludeOpenWorld: cmd.Bool("include-open-world")},
	}
	if cmd.Args().Present() {
		r.dir = cmd.Args().First()
	}
	for _, t := range strings.Split(cmd.String("tools"), ",") {
		if t = strings.TrimSpace(t); t != "" {
			r.tools = append(r.tools, t)
		}
	}
	r.interactive = cmd.Bool("interactive") || (r.f.Server == "" && stdinIsTerminal(a.io.Stdin))
	if r.interactive {
		r.in = bufio.NewReader(a.io.Stdin)
	}
	if r.f.Server == "" && r.interactive {
		spec, err := a.ask(r, "Server to test (a command line, testserver, or an http(s)://, ws(s)://, tcp:// URL): ")
		if err != nil {
			return err
		}
		r.f.Server = spec
		a.masker.AddURL(spec)
		a.masker.AddArgs(strings.Fields(spec))
	}
	if strings.TrimSpace(r.f.Server) == "" {
		return &Error{Code: ExitConfig, Msg: "missing --server",
			Hint: "say which server to start a collection for: mcpspec init --server \"python -m my_server\" (run it on a terminal to be asked)"}
	}
	if a.masker.Mask(r.f.Server) != r.f.Server {
		return &Error{Code: ExitConfig, Msg: "the server SPEC holds a secret, and init writes it into a collection you commit",
			Hint: "start from a SPEC without it, then move the secret into the collection as {{env.NAME}} or {{secret.NAME}} (docs/collections.md)"}
	}
	if r.name != "" && initFileStem(r.name) == "" {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("--name %q has no letter or digit to name a file by", r.name), Hint: "e.g. --name my-server"}
	}
	if err := r.f.validate("init"); err != nil {
		return err
	}
	if fi, err := os.Stat(r.dir); err != nil || !fi.IsDir() {
		if err := os.MkdirAll(r.dir, 0o755); err != nil {
			return &Error{Code: ExitConfig, Msg: fmt.Sprintf("cannot create %s: %v", r.dir, err), Hint: "name a directory you can write to", Err: err}
		}
	}
	plan, err := a.initIntrospect(ctx, r)
	if err != nil {
		return err
	}
	return a.initWrite(ctx, r, plan)
}

// stdinIsTerminal reports whether r is a terminal.
func stdinIsTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// ask prints question on stdout and reads one line of the wizard's input (echoed when it is
// not a terminal, so a transcript reads as a dialogue); end of input is an empty answer.
func (a *app) ask(r *initRun, question string) (string, error) {
	fmt.Fprint(a.io.Stdout, question)
	a.flush()
	line, err := r.in.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", &Error{Code: ExitRuntime, Msg: "cannot read the answer: " + err.Error(), Err: err}
	}
	line = strings.TrimSpace(line)
	if !stdinIsTerminal(a.io.Stdin) {
		fmt.Fprintln(a.io.Stdout, line) // a terminal echoes what was typed; a script does not
	}
	return line, nil
}

// initPlan is what init learned from the server: its metadata and one test per chosen tool.
type initPlan struct {
	meta    *audit.Metadata
	name    string
	tests   []*initTest
	skipped []detect.Skipped
	server  string
	// listUnstable: the tools/list snapshot differed between two runs, so it is dropped.
	listUnstable bool
}

// initIntrospect connects, lists and chooses the tools, and calls each chosen one once.
func (a *app) initIntrospect(ctx context.Context, r *initRun) (_ *initPlan, err error) {
	plan := &initPlan{server: r.f.Server}
	t, err := a.prepare(r.f, "init", prepareHook{session: auditSessionOptions})
	if err != nil {
		return nil, err
	}
	defer func() { t.finish(t.names(err)) }()
	s, err := t.open(ctx)
	if err != nil {
		return nil, err
	}
	err = func() error {
		meta, err := audit.Collect(ctx, s)
		if err != nil {
			return t.requestError(err, "list")
		}
		plan.meta = meta
		tools, err := s.ListTools(ctx)
		if err != nil {
			return t.requestError(err, "list")
		}
		info := s.ServerInfo()
		fmt.Fprintf(a.io.Stdout, "Connected to %s %s over %s (protocol %s): %d tools.\n",
			orDash(info.Name), info.Version, t.conn.Transport, s.ProtocolVersion(), len(tools))
		chosen, err := a.chooseTools(r, tools, plan)
		if err != nil {
			return err
		}
		plan.name = r.name
		if plan.name == "" {
			plan.name = info.Name
		}
		if initFileStem(plan.name) == "" {
			plan.name = "server"
		}
		ids := map[string]bool{initListID: true}
		for _, tool := range chosen {
			plan.tests = append(plan.tests, callOnce(ctx, s, tool, uniqueID(ids, tool.Name)))
		}
		return nil
	}()
	t.conn.Settle(ctx, err)
	_ = s.Close()
	printFindings(a.io.Stderr, t.conn.Findings.Take())
	return plan, err
}

// chooseTools applies --tools, or the selection (and, in the wizard, the answer).
func (a *app) chooseTools(r *initRun, tools []session.Tool, plan *initPlan) ([]session.Tool, error) {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	pick := func(want []string) ([]session.Tool, error) {
		var out []session.Tool
		for _, w := range want {
			i := slices.Index(names, w)
			if i < 0 {
				return nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("the server has no tool %q", w),
					Hint: withSuggestion(commandHintNames(w, names), "its tools: "+strings.Join(names, ", "))}
			}
			out = append(out, tools[i])
		}
		return out, nil
	}
	if len(r.tools) > 0 {
		return pick(r.tools)
	}
	chosen, skipped := r.sel.Select(tools)
	plan.skipped = skipped
	if r.interactive && len(tools) > 0 {
		for _, t := range tools {
			mark := "  "
			if slices.ContainsFunc(chosen, func(c session.Tool) bool { return c.Name == t.Name }) {
				mark = "* "
			}
			fmt.Fprintf(a.io.Stdout, "  %s%s\n", mark, t.Name)
		}
		ans, err := a.ask(r, fmt.Sprintf("Tools to test, comma-separated (Enter: the %d marked *): ", len(chosen)))
		if err != nil {
			return nil, err
		}
		if ans != "" {
			var want []string
			for _, w := range strings.Split(ans, ",") {
				if w = strings.TrimSpace(w); w != "" {
					want = append(want, w)
				}
			}
			plan.skipped = nil
			return pick(want)
		}
	}
	return chosen, nil
}

// initConflicts lists the files init would overwrite.
func initConflicts(paths ...string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			out = append(out, p)
		}
	}
	return out
}

// initPaths are the files of one init.
type initPaths struct {
	collection, snapshots, lock, gitignore string
}

func (r *initRun) paths(name string) initPaths {
	return initPaths{
		collection: filepath.Join(r.dir, initCollectionsDir, initFileStem(name)+".yaml"),
		snapshots:  filepath.Join(r.dir, initCollectionsDir, "__snapshots__"),
		lock:       filepath.Join(r.dir, filepath.FromSlash(audit.DefaultLockPath)),
		gitignore:  filepath.Join(r.dir, ".gitignore"),
	}
}
