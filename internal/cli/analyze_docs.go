package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/analyze/audit"
	"github.com/mcpspec/mcpspec/analyze/docsgen"
	"github.com/mcpspec/mcpspec/analyze/inventory"
	"github.com/mcpspec/mcpspec/analyze/score"
	"github.com/mcpspec/mcpspec/analyze/tokens"
	"github.com/mcpspec/mcpspec/internal/regfile"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

func (a *app) docsCommand() *cli.Command {
	return &cli.Command{
		Name:  "docs",
		Usage: "write reference docs of a server (tools, prompts, resources) as Markdown or HTML",
		UsageText: "mcpspec docs --server SPEC [--format markdown|html] [--output DIR] [--check] [--json]\n\n" +
			"Writes DIR/README.md (markdown) or DIR/index.html (html): the server's instructions; per\n" +
			"tool its annotations, a parameter table, the output schema, an example call, its token\n" +
			"cost and the audit's findings; prompts, resources and templates. The output is\n" +
			"deterministic (sorted, no timestamps), so it can be committed; --check compares instead\n" +
			"of writing and prints a diff. A file in DIR that docs did not write is not replaced without\n" +
			"--force. Exit codes: 0 written or up to date · 1 --check found stale docs · 3 bad flags or a\n" +
			"file docs will not replace ·\n" +
			"4 connection error.",
		Flags: append(serverFlagDefs(),
			&cli.StringFlag{Name: "format", Value: string(docsgen.Markdown), Usage: "`FORMAT`: markdown or html"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "docs", Usage: "write into `DIR`"},
			&cli.BoolFlag{Name: "force", Usage: "replace files in DIR that mcpspec docs did not write (a hand-written README.md)"},
			&cli.BoolFlag{Name: "check", Usage: "compare with the docs in DIR instead of writing; exit 1 and print a diff when they are stale"},
			&cli.StringFlag{Name: "encoding", Value: string(tokens.DefaultEncoding), Usage: "token `ENCODING` of the costs shown: o200k_base or cl100k_base"},
		),
		Action: documentVerb(a, a.docsRun),
	}
}

// docsJSON is the --json output of docs (schema/docs.v1.json).
type docsJSON struct {
	sessionJSON
	Format docsgen.Format `json:"format,omitempty"`
	Output string         `json:"output,omitempty"`
	Files  []string       `json:"files,omitempty"`
	// Check is set with --check.
	Check *docsCheckJSON `json:"check,omitempty"`
	jsonOutcome
}

type docsCheckJSON struct {
	UpToDate bool   `json:"upToDate"`
	Diff     string `json:"diff,omitempty"`
}

// docsRun does the work of docs, filling out for --json.
func (a *app) docsRun(ctx context.Context, cmd *cli.Command, f serverFlags, out *docsJSON) error {
	format := docsgen.Format(cmd.String("format"))
	if format == "md" {
		format = docsgen.Markdown
	}
	if format != docsgen.Markdown && format != docsgen.HTML {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("unknown --format %q", format), Hint: "use markdown or html"}
	}
	dir := cmd.String("output")
	if dir == "" {
		return &Error{Code: ExitConfig, Msg: "--output is empty", Hint: "name the directory to write, e.g. --output docs"}
	}
	counter, err := tokens.NewCounter(tokens.Encoding(cmd.String("encoding")))
	if err != nil {
		return &Error{Code: ExitConfig, Msg: err.Error(), Hint: "use o200k_base or cl100k_base"}
	}
	*out = docsJSON{Format: format, Output: dir}
	return a.withSession(ctx, f, "docs", func(ctx context.Context, t *target, s *session.Session) error {
		out.sessionJSON = newSessionJSON(t, s)
		inv, err := t.collect(ctx, s)
		if err != nil {
			return err
		}
		opts := &docsgen.Options{}
		if r, err := tokens.Measure(counter, inv.Tools); err == nil {
			opts.Tokens = r
		}
		if opts.Flags, err = auditFlags(ctx, inv); err != nil {
			return err
		}
		files, err := docsgen.Render(inv, format, opts)
		if err != nil {
			return &Error{Code: ExitRuntime, Msg: err.Error(), Err: err}
		}
		for name := range files {
			out.Files = append(out.Files, filepath.Join(dir, name))
		}
		sort.Strings(out.Files)
		if !cmd.Bool("check") {
			if err := docsgen.Write(dir, files, cmd.Bool("force")); err != nil {
				var ng *docsgen.NotGeneratedError
				if errors.As(err, &ng) {
					return &Error{Code: ExitConfig, Msg: err.Error(), Hint: "choose another --output directory, or pass --force to replace it", Err: err}
				}
				var nr *regfile.NotRegularError
				if errors.As(err, &nr) {
					return &Error{Code: ExitConfig, Msg: err.Error(), Hint: "remove it or choose another --output directory; docs never writes through a link", Err: err}
				}
				return &Error{Code: ExitRuntime, Msg: err.Error(), Hint: "check that the --output directory can be written", Err: err}
			}
			if !f.JSON {
				for _, p := range out.Files {
					fmt.Fprintf(a.io.Stdout, "wrote %s\n", p)
				}
			}
			return nil
		}
		diff, err := docsgen.Check(dir, files)
		if err != nil {
			// The committed docs cannot be read: a named pipe, a device, a file far too large.
			return &Error{Code: ExitConfig, Msg: err.Error(), Hint: "the committed docs must be regular files written by mcpspec docs", Err: err}
		}
		out.Check = &docsCheckJSON{UpToDate: diff == "", Diff: diff}
		if diff != "" {
			if !f.JSON {
				fmt.Fprint(a.io.Stdout, diff)
			}
			return &Error{Code: ExitFailure, Msg: fmt.Sprintf("the docs in %s are stale", dir),
				Hint: "regenerate them: " + docsCommandLine(f, format, dir)}
		}
		if !f.JSON {
			fmt.Fprintf(a.io.Stdout, "%s up to date\n", joinPaths(out.Files))
		}
		return nil
	})
}

func joinPaths(p []string) string {
	s := ""
	for i, x := range p {
		if i > 0 {
			s += ", "
		}
		s += x
	}
	return s
}

// auditFlags runs the passive audit over inv (with the committed suppressions) and returns, per
// tool, its findings of low severity or more as "severity rule: message", in the audit's order.
func auditFlags(ctx context.Context, inv *inventory.Inventory) (map[string][]string, error) {
	opts, err := committedSuppressions()
	if err != nil {
		return nil, err
	}
	rep, err := audit.Run(ctx, []*audit.Metadata{score.AuditMetadata(inv)}, opts)
	if err != nil {
		return nil, err
	}
	flags := map[string][]string{}
	for _, f := range audit.AtLeast(rep.Findings, audit.Low) {
		if f.Subject.Kind == audit.KindTool {
			flags[f.Subject.Name] = append(flags[f.Subject.Name], fmt.Sprintf("%s %s: %s", f.Severity, f.RuleID, f.Message))
		}
	}
	return flags, nil
}

// docsCommandLine is the command that writes the docs again, with the flags that change them.
func docsCommandLine(f serverFlags, format docsgen.Format, dir string) string {
	words := []string{"mcpspec", "docs", "--server", f.Server}
	if f.ProtocolVersion != "" {
		words = append(words, "--protocol-version", f.ProtocolVersion)
	}
	if f.Transport != "" {
		words = append(words, "--transport", f.Transport)
	}
	words = append(words, "--format", string(format), "--output", dir)
	return spec.Join(words)
}
