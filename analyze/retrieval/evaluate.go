package retrieval

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// ReportVersion identifies the JSON shape of [Report] (schema/retrieval.v1.json).
const ReportVersion = "retrieval.v1"

// MaxReportBytes bounds a saved report read back as a baseline: a larger file is refused, unread.
const MaxReportBytes = 16 << 20

// SearchFunc runs one query through the search under test and returns tool names, best
// first, at most limit of them.
type SearchFunc func(ctx context.Context, query string, limit int) ([]string, error)

// Options tunes [Evaluate]. Nil means defaults.
type Options struct {
	// Ks are the cut-offs of Recall@k (default 1, 3, 5, 10).
	Ks []int
}

// Report is the outcome of a golden set against one search.
type Report struct {
	SchemaVersion string `json:"schemaVersion"`
	// Search names the search: "bm25" or "tool:NAME".
	Search        string        `json:"search"`
	GoldenVersion string        `json:"goldenVersion,omitempty"`
	Queries       int           `json:"queries"`
	Metrics       Metrics       `json:"metrics"`
	PerQuery      []QueryResult `json:"perQuery"`
	// Gate is set when the report was compared with a baseline.
	Gate *Gate `json:"gate,omitempty"`
}

// Metrics are the means over the queries, rounded to 4 decimals.
type Metrics struct {
	// RecallAt maps k to Recall@k.
	RecallAt map[int]float64 `json:"recallAt"`
	MRR      float64         `json:"mrr"`
	NDCGAt10 float64         `json:"ndcgAt10"`
	MAP      float64         `json:"map"`
}

// QueryResult is one query's outcome.
type QueryResult struct {
	ID    string `json:"id"`
	Query string `json:"query"`
	// Ranked is what the search returned (at most 10 or the largest k).
	Ranked []string `json:"ranked"`
	// FirstRelevant is the rank of the first relevant tool, 0 when none was returned.
	FirstRelevant  int     `json:"firstRelevant"`
	RecallAt5      float64 `json:"recallAt5"`
	ReciprocalRank float64 `json:"reciprocalRank"`
	NDCGAt10       float64 `json:"ndcgAt10"`
	AP             float64 `json:"averagePrecision"`
	// Missed are the relevant tools not in Ranked.
	Missed []string `json:"missed,omitempty"`
}

// Evaluate runs every query of g through search and aggregates the metrics.
func Evaluate(ctx context.Context, g *GoldenSet, search SearchFunc, name string, opts *Options) (*Report, error) {
	ks := []int{1, 3, 5, 10}
	if opts != nil && len(opts.Ks) > 0 {
		ks = slices.Sorted(slices.Values(opts.Ks))
		ks = slices.Compact(ks)
	}
	limit := max(10, ks[len(ks)-1])
	r := &Report{SchemaVersion: ReportVersion, Search: name, GoldenVersion: g.Version, Queries: len(g.Queries),
		Metrics: Metrics{RecallAt: map[int]float64{}}, PerQuery: []QueryResult{}}
	sums := map[int]float64{}
	var mrr, ndcg, ap float64
	for _, q := range g.Queries {
		ranked, err := search(ctx, q.Query, limit)
		if err != nil {
			return nil, fmt.Errorf("retrieval: query %q: %w", q.ID, err)
		}
		if len(ranked) > limit {
			ranked = ranked[:limit]
		}
		qr := QueryResult{ID: q.ID, Query: q.Query, Ranked: append([]string{}, ranked...)}
		qr.ReciprocalRank = ReciprocalRank(ranked, q.Labels)
		if qr.ReciprocalRank > 0 {
			qr.FirstRelevant = int(math.Round(1 / qr.ReciprocalRank))
		}
		qr.RecallAt5 = round(RecallAtK(ranked, q.Labels, 5))
		qr.NDCGAt10 = round(NDCGAtK(ranked, q.Labels, 10))
		qr.AP = round(AveragePrecision(ranked, q.Labels))
		for _, l := range q.Labels {
			if l.Relevance >= 1 && !slices.Contains(ranked, l.Tool) {
				qr.Missed = append(qr.Missed, l.Tool)
			}
		}
		for _, k := range ks {
			sums[k] += RecallAtK(ranked, q.Labels, k)
		}
		mrr += qr.ReciprocalRank
		ndcg += NDCGAtK(ranked, q.Labels, 10)
		ap += AveragePrecision(ranked, q.Labels)
		qr.ReciprocalRank = round(qr.ReciprocalRank)
		r.PerQuery = append(r.PerQuery, qr)
	}
	n := float64(len(g.Queries))
	for _, k := range ks {
		r.Metrics.RecallAt[k] = round(sums[k] / n)
	}
	r.Metrics.MRR, r.Metrics.NDCGAt10, r.Metrics.MAP = round(mrr/n), round(ndcg/n), round(ap/n)
	return r, nil
}

func round(f float64) float64 { return math.Round(f*10000) / 10000 }

// Gate is the verdict of a report against a baseline.
type Gate struct {
	Passed    bool    `json:"passed"`
	Baseline  string  `json:"baseline"`
	Tolerance float64 `json:"tolerance"`
	// Regressions are the metrics that fell by more than Tolerance.
	Regressions []MetricChange `json:"regressions"`
}

// MetricChange is one metric in the baseline and now.
type MetricChange struct {
	Metric   string  `json:"metric"`
	Baseline float64 `json:"baseline"`
	Current  float64 `json:"current"`
}

// Compare gates current against baseline: every metric both have (Recall@k for the shared
// ks, MRR, nDCG@10, MAP) may fall by at most tolerance (absolute, e.g. 0.02).
func Compare(baseline, current *Report, baselineName string, tolerance float64) *Gate {
	g := &Gate{Baseline: baselineName, Tolerance: tolerance, Regressions: []MetricChange{}}
	check := func(name string, b, c float64) {
		if c < b-tolerance-1e-9 {
			g.Regressions = append(g.Regressions, MetricChange{Metric: name, Baseline: b, Current: c})
		}
	}
	ks := make([]int, 0, len(current.Metrics.RecallAt))
	for k := range current.Metrics.RecallAt {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	for _, k := range ks {
		if b, ok := baseline.Metrics.RecallAt[k]; ok {
			check("recall@"+strconv.Itoa(k), b, current.Metrics.RecallAt[k])
		}
	}
	check("mrr", baseline.Metrics.MRR, current.Metrics.MRR)
	check("ndcg@10", baseline.Metrics.NDCGAt10, current.Metrics.NDCGAt10)
	check("map", baseline.Metrics.MAP, current.Metrics.MAP)
	g.Passed = len(g.Regressions) == 0
	return g
}
