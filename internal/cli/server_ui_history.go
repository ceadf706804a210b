package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpspec/mcpspec/baseline/history"
	"github.com/mcpspec/mcpspec/internal/cli/ui"
)

// uiHistory backs the UI's history page with the project's history database
// (.mcpspec/history.db under dir), opened for each request so that the UI holds no lock
// between them and sees the runs other mcpspec processes add.
type uiHistory struct{ dir string }

var _ ui.History = uiHistory{}

func (h uiHistory) open(ctx context.Context) (*history.DB, error) {
	return history.Open(ctx, filepath.Join(h.dir, history.DBPath))
}

// Runs lists the runs that match f, newest first.
func (h uiHistory) Runs(ctx context.Context, f ui.HistoryFilter) ([]ui.HistoryRun, error) {
	db, err := h.open(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	runs, err := db.Runs(ctx, history.Filter{Kind: f.Kind, Branch: f.Branch, Limit: f.Limit})
	if err != nil {
		return nil, err
	}
	out := make([]ui.HistoryRun, 0, len(runs))
	for _, r := range runs {
		out = append(out, ui.HistoryRun{ID: r.ID, Kind: r.Kind, Branch: r.Branch, Commit: r.Commit,
			Started: r.Started, Passed: r.Verdict == "pass", Summary: historySummary(&r.Header), Dir: r.Dir})
	}
	return out, nil
}

// Trend returns one point per run of kind on branch, oldest first: the pass rate of a test
// run, the p99 of a load run, the score of a score run.
func (h uiHistory) Trend(ctx context.Context, branch, kind string) ([]ui.TrendPoint, error) {
	db, err := h.open(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	pts, err := db.Trend(ctx, branch, kind, 0)
	if err != nil {
		return nil, err
	}
	out := make([]ui.TrendPoint, 0, len(pts))
	for _, p := range pts {
		v := p.PassRate
		switch {
		case v == nil && p.P99MS != nil:
			v = p.P99MS
		case v == nil && p.Score != nil:
			v = p.Score
		}
		if v == nil {
			continue
		}
		out = append(out, ui.TrendPoint{RunID: p.ID, At: p.Started, Value: *v})
	}
	return out, nil
}

// historySummary is a run's one-line summary: its verdict, then its figures by name.
func historySummary(h *history.Header) string {
	parts := []string{h.Verdict}
	keys := make([]string, 0, len(h.Figures))
	for k := range h.Figures {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %g", k, h.Figures[k]))
	}
	return strings.Join(parts, " · ")
}
