package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/baseline/history"
)

// historyKinds are the verbs whose runs the history keeps.
func historyKinds() []string {
	return []string{"test", "load", "deadlock", "race", "head-of-line", "fuzz", "probe", "audit", "score"}
}

// trendKinds are the kinds a trend is drawn for.
func trendKinds() []string { return []string{"test", "load", "score"} }

func (a *app) historyCommand() *cli.Command {
	return &cli.Command{
		Name:  "history",
		Usage: "list past runs (test, load, detectors, audit, score) and their trends",
		UsageText: "mcpspec history [--kind K] [--branch B] [--server S] [--since 24h] [--limit 20] [--json]\n" +
			"mcpspec history trend --kind test|load|score [--branch B] [--limit 20] [--json]\n" +
			"mcpspec history reindex\n\n" +
			"Every run of test, load, deadlock, race, head-of-line, fuzz, probe, audit and score keeps a\n" +
			"directory, .mcpspec/runs/<kind>/<id>/ (run.json and the verb's JSON output), indexed in\n" +
			".mcpspec/history.db. The directories are the truth: 'history reindex' rebuilds the database\n" +
			"from them. The newest " + strconv.Itoa(defaultHistoryKeep) + " runs of each kind are kept (" + envHistoryKeep + "=N); --no-history\n" +
			"or " + envNoHistory + "=1 keeps none.\n\n" +
			"Exit codes: 0 ok · 2 runtime error: the database cannot be read · 3 bad flags, or a database file that is not mcpspec's.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "kind", Usage: "only runs of verb `K` (" + strings.Join(historyKinds(), ", ") + ")"},
			&cli.StringFlag{Name: "branch", Usage: "only runs on git branch `B`"},
			&cli.StringFlag{Name: "server", Usage: "only runs whose server SPEC contains `S`"},
			&durationFlag{Name: "since", Usage: "only runs started within `D` (e.g. 24h)"},
			&cli.IntFlag{Name: "limit", Value: 20, Usage: "show at most `N` runs"},
			&cli.BoolFlag{Name: "json", Usage: "print the runs as JSON"},
		},
		Action: a.historyList,
		Commands: []*cli.Command{
			{
				Name:      "trend",
				Usage:     "a kind's key figure run by run, oldest first: test pass rate, load p99, score",
				UsageText: "mcpspec history trend --kind test|load|score [--branch B] [--limit 20] [--json]",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "kind", Value: "test", Usage: "`K`: test (pass rate), load (p99) or score"},
					&cli.StringFlag{Name: "branch", Usage: "only runs on git branch `B` (default: every branch)"},
					&cli.IntFlag{Name: "limit", Value: 20, Usage: "the last `N` runs"},
					&cli.BoolFlag{Name: "json", Usage: "print the points as JSON"},
				},
				Action: a.historyTrend,
			},
			{
				Name:      "reindex",
				Usage:     "rebuild .mcpspec/history.db from the run directories",
				UsageText: "mcpspec history reindex",
				Action:    a.historyReindex,
			},
		},
	}
}

// openHistory opens the project's history database for a history verb.
func openHistory(ctx context.Context) (*history.DB, error) {
	db, err := history.Open(ctx, history.DBPath)
	if errors.Is(err, history.ErrForeign) || errors.Is(err, history.ErrNewer) {
		return nil, &Error{Code: ExitConfig, Msg: err.Error(),
			Hint: "move the file away; 'mcpspec history reindex' rebuilds the history from " + history.RunsDir, Err: err}
	}
	if err != nil {
		return nil, &Error{Code: ExitRuntime, Msg: err.Error(), Err: err}
	}
	return db, nil
}

func (a *app) historyList(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Present() {
		return usageError(cmd, fmt.Errorf("unexpected argument %q (subcommands: trend, reindex)", cmd.Args().First()))
	}
	if k := cmd.String("kind"); k != "" && !slices.Contains(historyKinds(), k) {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("--kind %q: not a kind of run", k), Hint: "use one of: " + strings.Join(historyKinds(), ", ")}
	}
	if cmd.Int("limit") < 1 {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("--limit must be at least 1, got %d", cmd.Int("limit")), Hint: "leave it out for 20"}
	}
	f := history.Filter{Kind: cmd.String("kind"), Branch: cmd.String("branch"), Server: cmd.String("server"), Limit: int(cmd.Int("limit"))}
	if d := cmd.Duration("since"); d > 0 {
		f.Since = time.Now().Add(-d)
	}
	db, err := openHistory(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	runs, err := db.Runs(ctx, f)
	if err != nil {
		return &Error{Code: ExitRuntime, Msg: err.Error(), Err: err}
	}
	if cmd.Bool("json") {
		if runs == nil {
			runs = []history.Run{}
		}
		return writeJSON(a.io.Stdout, struct {
			Runs []history.Run `json:"runs"`
		}{runs})
	}
	if len(runs) == 0 {
		fmt.Fprintln(a.io.Stdout, "no runs recorded (run test, load, a detector, audit or score; 'mcpspec history reindex' reads .mcpspec/runs)")
		return nil
	}
	rows := [][]string{{"WHEN", "KIND", "BRANCH", "VERDICT", "KEY FIGURE", "DURATION", "RUN"}}
	for _, r := range runs {
		rows = append(rows, []string{r.Started.Local().Format("2006-01-02 15:04:05"), r.Kind, orDash(r.Branch), r.Verdict,
			keyFigure(r.Figures), (time.Duration(r.DurationMS) * time.Millisecond).String(), r.Dir})
	}
	return table(a.io.Stdout, rows)
}

// keyFigure renders a run's figures in a few words, the most telling first.
func keyFigure(f map[string]float64) string {
	var parts []string
	if v, ok := f[history.FigurePassRate]; ok {
		parts = append(parts, fmt.Sprintf("%s passed", percent(v)))
	}
	if v, ok := f[history.FigureP99]; ok {
		parts = append(parts, fmt.Sprintf("p99 %sms", strconv.FormatFloat(v, 'f', -1, 64)))
	}
	if v, ok := f[history.FigureThroughput]; ok {
		parts = append(parts, fmt.Sprintf("%.1f/s", v))
	}
	if v, ok := f[history.FigureErrorRate]; ok && v > 0 {
		parts = append(parts, fmt.Sprintf("%s errors", percent(v)))
	}
	if v, ok := f[history.FigureScore]; ok {
		parts = append(parts, fmt.Sprintf("score %d", int(v)))
	}
	_, pass := f[history.FigurePassRate]
	if v, ok := f[history.FigureTests]; ok && !pass {
		parts = append(parts, fmt.Sprintf("%d tests, %d failed", int(v), int(f[history.FigureFailed])))
	} else if v, ok := f[history.FigureFindings]; ok {
		parts = append(parts, fmt.Sprintf("%d findings", int(v)))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

func percent(v float64) string {
	return strconv.FormatFloat(math.Round(v*1000)/10, 'f', -1, 64) + "%"
}

func (a *app) historyTrend(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Present() {
		return usageError(cmd, fmt.Errorf("unexpected argument %q", cmd.Args().First()))
	}
	kind := cmd.String("kind")
	if !slices.Contains(trendKinds(), kind) {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("--kind %q has no trend", kind), Hint: "use one of: " + strings.Join(trendKinds(), ", ") + " ('mcpspec history --kind K' lists the others)"}
	}
	if cmd.Int("limit") < 1 {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("--limit must be at least 1, got %d", cmd.Int("limit")), Hint: "leave it out for 20"}
	}
	db, err := openHistory(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	points, err := db.Trend(ctx, cmd.String("branch"), kind, int(cmd.Int("limit")))
	if err != nil {
		return &Error{Code: ExitRuntime, Msg: err.Error(), Err: err}
	}
	if cmd.Bool("json") {
		if points == nil {
			points = []history.Point{}
		}
		return writeJSON(a.io.Stdout, struct {
			Kind   string          `json:"kind"`
			Branch string          `json:"branch,omitempty"`
			Points []history.Point `json:"points"`
		}{kind, cmd.String("branch"), points})
	}
	if len(points) == 0 {
		fmt.Fprintf(a.io.Stdout, "no %s runs recorded\n", kind)
		return nil
	}
	return writeTrend(a.io.Stdout, kind, points)
}

// trendValue is the figure a kind's trend follows, and how it prints.
func trendValue(kind string, p history.Point) (float64, string, bool) {
	var v *float64
	switch kind {
	case "test":
		if v = p.PassRate; v != nil {
			return *v, percent(*v), true
		}
	case "load":
		if v = p.P99MS; v != nil {
			return *v, strconv.FormatFloat(*v, 'f', -1, 64) + "ms", true
		}
	case "score":
		if v = p.Score; v != nil {
			return *v, strconv.Itoa(int(*v)), true
		}
	}
	return 0, "-", false
}

// writeTrend prints a sparkline of the points, oldest first, and one row per point.
func writeTrend(w io.Writer, kind string, points []history.Point) error {
	label := map[string]string{"test": "pass rate", "load": "p99", "score": "score"}[kind]
	var vals []float64
	var has []bool
	for _, p := range points {
		v, _, ok := trendValue(kind, p)
		vals, has = append(vals, v), append(has, ok)
	}
	fmt.Fprintf(w, "%s %s, %d runs, oldest first: %s\n\n", kind, label, len(points), sparkline(vals, has))
	rows := [][]string{{"WHEN", "BRANCH", "VERDICT", strings.ToUpper(label), "RUN"}}
	for _, p := range points {
		_, s, _ := trendValue(kind, p)
		rows = append(rows, []string{p.Started.Local().Format("2006-01-02 15:04:05"), orDash(p.Branch), p.Verdict, s, p.ID})
	}
	return table(w, rows)
}

// sparkline draws vals as block characters scaled between their minimum and maximum; a point
// without a value is a space.
func sparkline(vals []float64, has []bool) string {
	const blocks = "▁▂▃▄▅▆▇█"
	bars := []rune(blocks)
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, v := range vals {
		if has[i] {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	var b strings.Builder
	for i, v := range vals {
		switch {
		case !has[i]:
			b.WriteRune(' ')
		case hi == lo:
			b.WriteRune(bars[len(bars)-1])
		default:
			b.WriteRune(bars[int(math.Round((v-lo)/(hi-lo)*float64(len(bars)-1)))])
		}
	}
	return b.String()
}

func (a *app) historyReindex(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Present() {
		return usageError(cmd, fmt.Errorf("unexpected argument %q", cmd.Args().First()))
	}
	db, err := openHistory(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	n, err := db.Reindex(ctx, history.RunsDir)
	var se *history.SkippedError
	if errors.As(err, &se) {
		for _, s := range se.Skipped {
			fmt.Fprintf(a.io.Stderr, "warning: skipped %v\n", s)
		}
		err = nil
	}
	if err != nil {
		return &Error{Code: ExitRuntime, Msg: err.Error(), Err: err}
	}
	fmt.Fprintf(a.io.Stdout, "indexed %d run(s) from %s into %s\n", n, history.RunsDir, history.DBPath)
	return nil
}
