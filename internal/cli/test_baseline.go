package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/baseline"
	"github.com/mcpspec/mcpspec/internal/redact"
	"github.com/mcpspec/mcpspec/result"
)

// gitTimeout bounds each git command used to name baselines.
const gitTimeout = 3 * time.Second

func (a *app) baselineCommand() *cli.Command {
	dirFlag := &cli.StringFlag{Name: "baseline-dir", Value: defaultBaselineDir, Usage: "where baselines live (`DIR`)"}
	return &cli.Command{
		Name:  "baseline",
		Usage: "save the latest test run as a baseline, or list the baselines",
		UsageText: "mcpspec baseline save [NAME]   promote .mcpspec/runs/latest.json (NAME: the git branch, else \"default\")\n" +
			"mcpspec baseline list          list the saved baselines\n\n" +
			"Compare a run with one: mcpspec test … --baseline NAME, or mcpspec compare --baseline NAME.",
		Commands: []*cli.Command{
			{
				Name:      "save",
				Usage:     "save the latest run of 'mcpspec test' as baseline NAME",
				UsageText: "mcpspec baseline save [NAME] [--baseline-dir DIR]",
				Flags:     []cli.Flag{dirFlag},
				Action:    a.baselineSave,
			},
			{
				Name:      "list",
				Usage:     "list the saved baselines",
				UsageText: "mcpspec baseline list [--baseline-dir DIR] [--json]",
				Flags:     []cli.Flag{dirFlag, &cli.BoolFlag{Name: "json", Usage: "print JSON on stdout"}},
				Action:    a.baselineList,
			},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Present() {
				name := cmd.Args().First()
				return &Error{Code: ExitConfig, Msg: fmt.Sprintf("unknown baseline command %q (want save or list)", name),
					Hint: withSuggestion(commandHint(name, cmd.Commands), "run 'mcpspec baseline --help' for usage")}
			}
			return cli.ShowSubcommandHelp(cmd)
		},
	}
}

func (a *app) baselineSave(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Len() > 1 {
		return usageError(cmd, fmt.Errorf("unexpected argument %q", cmd.Args().Get(1)))
	}
	run, err := baseline.LoadLatest(".")
	if err != nil {
		hint := "run 'mcpspec test COLLECTION' first: every run is saved as " + baseline.LatestPath
		if !errors.Is(err, baseline.ErrNotFound) {
			hint = "the latest run cannot be read; run 'mcpspec test' again"
		}
		return &Error{Code: ExitConfig, Msg: err.Error(), Hint: hint, Err: err}
	}
	name := cmd.Args().First()
	if name == "" {
		name = defaultBaselineName(run)
		if run.Git == nil {
			if g := gitInfo(ctx); g != nil && g.Branch != "" && g.Branch != "HEAD" {
				name = g.Branch
			}
		}
	}
	p, err := saveBaseline(cmd.String("baseline-dir"), name, run, a.masker)
	if err != nil {
		return err
	}
	c := run.Counts()
	fmt.Fprintf(a.io.Stdout, "Saved baseline %s (%s): run %s, %d passed, %d failed, %d errored, %d skipped\n",
		savedName(name, p), p, run.ID, c.Passed, c.Failed, c.Errored, c.Skipped)
	return nil
}

// baselineEntry is one line of `baseline list`.
type baselineEntry struct {
	Name      string      `json:"name"`
	Path      string      `json:"path"`
	RunID     string      `json:"runId,omitempty"`
	StartedAt *time.Time  `json:"startedAt,omitempty"`
	Git       *result.Git `json:"git,omitempty"`
	Total     int         `json:"total"`
	Passed    int         `json:"passed"`
	Failed    int         `json:"failed"`
	Errored   int         `json:"errored"`
	Skipped   int         `json:"skipped"`
	Problem   string      `json:"problem,omitempty"`
}

func (a *app) baselineList(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Present() {
		return usageError(cmd, fmt.Errorf("unexpected argument %q", cmd.Args().First()))
	}
	entries, err := listBaselines(cmd.String("baseline-dir"))
	if err != nil {
		return &Error{Code: ExitRuntime, Msg: err.Error(), Err: err}
	}
	if cmd.Bool("json") {
		if entries == nil {
			entries = []baselineEntry{}
		}
		return writeJSON(a.io.Stdout, entries)
	}
	if len(entries) == 0 {
		fmt.Fprintf(a.io.Stdout, "No baselines in %s. Save one with 'mcpspec test … --save-baseline' or 'mcpspec baseline save NAME'.\n", cmd.String("baseline-dir"))
		return nil
	}
	rows := [][]string{{"NAME", "SAVED RUN", "STARTED", "GIT", "PASSED", "FAILED", "ERRORED", "SKIPPED"}}
	for _, e := range entries {
		if e.Problem != "" {
			rows = append(rows, []string{e.Name, "(unreadable: " + truncate(e.Problem, 60) + ")", "", "", "", "", "", ""})
			continue
		}
		git := "-"
		if e.Git != nil && e.Git.Branch != "" {
			git = e.Git.Branch
			if len(e.Git.Commit) >= 12 {
				git += " @ " + e.Git.Commit[:12]
			}
		}
		started := "-"
		if e.StartedAt != nil {
			started = e.StartedAt.Local().Format("2006-01-02 15:04")
		}
		rows = append(rows, []string{e.Name, e.RunID, started, git,
			fmt.Sprint(e.Passed), fmt.Sprint(e.Failed), fmt.Sprint(e.Errored), fmt.Sprint(e.Skipped)})
	}
	return table(a.io.Stdout, rows)
}

// baselineFile is where baseline name lives in dir.
func baselineFile(dir, name string) (string, error) {
	s, err := baseline.SanitizeName(name)
	if err != nil {
		return "", &Error{Code: ExitConfig, Msg: fmt.Sprintf("baseline name %q: %v", name, err), Hint: "use letters, digits, '.', '_' or '-'", Err: err}
	}
	return filepath.Join(dir, s+".json"), nil
}

// saveBaseline writes run as baseline name in dir, atomically, and returns the file's path.
// savedName quotes the name a baseline was saved under: its file's stem, with the name given
// when that was made file-safe ("feature/x" is saved as "feature-x"), so the user knows what to
// pass to --baseline.
func savedName(given, path string) string {
	stem := strings.TrimSuffix(filepath.Base(path), ".json")
	if stem == given {
		return strconv.Quote(stem)
	}
	return fmt.Sprintf("%q (from %q)", stem, given)
}

func saveBaseline(dir, name string, run *result.Run, m *redact.Masker) (string, error) {
	p, err := baselineFile(dir, name)
	if err != nil {
		return "", err
	}
	fail := func(err error) (string, error) {
		return "", &Error{Code: ExitRuntime, Msg: fmt.Sprintf("save baseline %q: %v", name, err), Err: err}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	tmp, err := os.CreateTemp(dir, ".baseline-*.json")
	if err != nil {
		return fail(err)
	}
	defer os.Remove(tmp.Name())
	w := redact.NewWriter(tmp, m)
	err = baseline.WriteRun(w, run)
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		_ = tmp.Close()
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fail(err)
	}
	return p, nil
}

// loadBaseline reads baseline name from dir; a missing one matches baseline.ErrNotFound.
func loadBaseline(dir, name string) (*result.Run, string, error) {
	p, err := baselineFile(dir, name)
	if err != nil {
		return nil, "", err
	}
	run, err := baseline.LoadFile(p)
	return run, p, err
}

// listBaselines reads every baseline in dir, sorted by name; unreadable files are listed with
// their problem.
func listBaselines(dir string) ([]baselineEntry, error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list baselines: %w", err)
	}
	var out []baselineEntry
	for _, de := range des {
		name, ok := strings.CutSuffix(de.Name(), ".json")
		if !ok || de.IsDir() || strings.HasPrefix(name, ".") {
			continue
		}
		e := baselineEntry{Name: name, Path: filepath.Join(dir, de.Name())}
		run, err := baseline.LoadFile(e.Path)
		if err != nil {
			e.Problem = runFileProblem(de.Name(), err)
		} else {
			c := run.Counts()
			started := run.StartedAt
			e.RunID, e.StartedAt, e.Git = run.ID, &started, run.Git
			e.Total, e.Passed, e.Failed, e.Errored, e.Skipped = c.Total, c.Passed, c.Failed, c.Errored, c.Skipped
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// defaultBaselineName is the run's git branch, else "default".
func defaultBaselineName(run *result.Run) string {
	if run != nil && run.Git != nil && run.Git.Branch != "" && run.Git.Branch != "HEAD" {
		return run.Git.Branch
	}
	return "default"
}

// gitInfo returns the branch and commit of the working directory's git repository, or nil
// outside one (or without git).
func gitInfo(ctx context.Context) *result.Git {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "HEAD", "--abbrev-ref", "HEAD").Output()
	if err != nil {
		return nil
	}
	lines := strings.Fields(string(out))
	if len(lines) != 2 {
		return nil
	}
	return &result.Git{Commit: lines[0], Branch: lines[1]}
}
