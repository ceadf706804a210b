package ui

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// History is the run history the history page shows. The UI only reads it; nil means no
// history is available (the page says so).
type History interface {
	// Runs returns the runs that match f, newest first.
	Runs(ctx context.Context, f HistoryFilter) ([]HistoryRun, error)
	// Trend returns one point per run of kind on branch, oldest first.
	Trend(ctx context.Context, branch, kind string) ([]TrendPoint, error)
}

// HistoryFilter selects runs; zero fields match everything.
type HistoryFilter struct {
	Kind   string // "test", "load", "deadlock", …
	Branch string
	Limit  int // 0 = 100
}

// HistoryRun is one indexed run.
type HistoryRun struct {
	ID      string    `json:"id"`
	Kind    string    `json:"kind"`
	Branch  string    `json:"branch,omitempty"`
	Commit  string    `json:"commit,omitempty"`
	Started time.Time `json:"started"`
	Passed  bool      `json:"passed"`
	Summary string    `json:"summary,omitempty"`
	// Dir is the run directory, the source of truth.
	Dir string `json:"dir,omitempty"`
}

// TrendPoint is one run's figure: a pass rate, a p99 in ms or a score, by kind.
type TrendPoint struct {
	RunID string    `json:"runId"`
	At    time.Time `json:"at"`
	Value float64   `json:"value"`
}

func (s *Server) historyRuns(w http.ResponseWriter, r *http.Request) {
	if s.o.History == nil {
		writeError(w, http.StatusNotFound, "history not available")
		return
	}
	q := r.URL.Query()
	limit, _ := strconv.Atoi(q.Get("limit"))
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	runs, err := s.o.History.Runs(r.Context(), HistoryFilter{Kind: q.Get("kind"), Branch: q.Get("branch"), Limit: limit})
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if runs == nil {
		runs = []HistoryRun{}
	}
	writeJSON(w, http.StatusOK, runs)
}

func (s *Server) historyTrend(w http.ResponseWriter, r *http.Request) {
	if s.o.History == nil {
		writeError(w, http.StatusNotFound, "history not available")
		return
	}
	q := r.URL.Query()
	pts, err := s.o.History.Trend(r.Context(), q.Get("branch"), q.Get("kind"))
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if pts == nil {
		pts = []TrendPoint{}
	}
	writeJSON(w, http.StatusOK, pts)
}
