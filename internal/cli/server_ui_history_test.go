package cli

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/baseline/history"
	"github.com/mcpspec/mcpspec/internal/cli/ui"
)

// TestUIHistoryReadsTheProjectDatabase indexes three runs of two kinds in a project and reads
// them back through the UI's history: newest first, the pass verdict, the filter by kind, and
// each kind's trend figure (pass rate for test, p99 for load).
func TestUIHistoryReadsTheProjectDatabase(t *testing.T) {
	ctx := context.Background()
	project := t.TempDir()
	db, err := history.Open(ctx, filepath.Join(project, history.DBPath))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	add := func(i int, kind, verdict string, figures map[string]float64) {
		t.Helper()
		started := start.Add(time.Duration(i) * time.Hour)
		dir, id, err := history.CreateDir(filepath.Join(project, history.RunsDir), kind, started)
		if err != nil {
			t.Fatal(err)
		}
		h := &history.Header{Kind: kind, ID: id, Started: started, Branch: "main", Verdict: verdict, Figures: figures}
		if err := history.WriteHeader(dir, h, nil); err != nil {
			t.Fatal(err)
		}
		if err := db.Index(ctx, dir); err != nil {
			t.Fatal(err)
		}
	}
	add(0, "test", "fail", map[string]float64{history.FigurePassRate: 0.5})
	add(1, "load", "pass", map[string]float64{history.FigureP99: 12.5})
	add(2, "test", "pass", map[string]float64{history.FigurePassRate: 1})
	db.Close()

	h := uiHistory{dir: project}
	all, err := h.Runs(ctx, ui.HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 || all[0].Kind != "test" || !all[0].Passed || all[1].Kind != "load" || all[2].Passed {
		t.Fatalf("runs = %+v, want test(pass), load, test(fail), newest first", all)
	}
	if all[2].Summary != "fail · passRate 0.5" {
		t.Errorf("summary = %q", all[2].Summary)
	}
	tests, err := h.Runs(ctx, ui.HistoryFilter{Kind: "test"})
	if err != nil || len(tests) != 2 {
		t.Fatalf("test runs = %+v, %v; want 2", tests, err)
	}
	for kind, want := range map[string][]float64{"test": {0.5, 1}, "load": {12.5}} {
		pts, err := h.Trend(ctx, "main", kind)
		if err != nil {
			t.Fatal(err)
		}
		var got []float64
		for _, p := range pts {
			got = append(got, p.Value)
		}
		if len(got) != len(want) || got[0] != want[0] || got[len(got)-1] != want[len(want)-1] {
			t.Errorf("%s trend = %v, want %v", kind, got, want)
		}
	}
}
