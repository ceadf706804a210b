package history_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mcpspec/mcpspec/baseline/history"
)

// A run directory written by hand (the CLI writes one per run), indexed, listed and drawn as
// a trend.
func Example() {
	ctx := context.Background()
	project, _ := os.MkdirTemp("", "history-example")
	defer os.RemoveAll(project)
	runs := filepath.Join(project, history.RunsDir)

	db, err := history.Open(ctx, filepath.Join(project, history.DBPath))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	start := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	for i, rate := range []float64{1, 0.5, 1} {
		started := start.Add(time.Duration(i) * time.Hour)
		dir, id, _ := history.CreateDir(runs, "test", started)
		h := &history.Header{Kind: "test", ID: id, Started: started, Branch: "main", Verdict: "pass",
			Figures: map[string]float64{history.FigurePassRate: rate}}
		if rate < 1 {
			h.Verdict, h.ExitCode = "fail", 1
		}
		_ = history.WriteHeader(dir, h, nil)
		if err := db.Index(ctx, dir); err != nil {
			fmt.Println(err)
			return
		}
	}
	latest, _ := db.Runs(ctx, history.Filter{Kind: "test", Limit: 1})
	fmt.Println("latest:", latest[0].ID, latest[0].Verdict)
	points, _ := db.Trend(ctx, "main", "test", 10)
	for _, p := range points {
		fmt.Println(p.Started.Format(time.Kitchen), p.Verdict, *p.PassRate)
	}
	// Output:
	// latest: 20261128T100000-000Z pass
	// 8:00AM pass 1
	// 9:00AM fail 0.5
	// 10:00AM pass 1
}
