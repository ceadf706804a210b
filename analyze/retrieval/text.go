package retrieval

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteText writes r as a table of queries, then the metrics and the gate.
func WriteText(w io.Writer, r *Report) error {
	version := ""
	if r.GoldenVersion != "" {
		version = " (golden set " + r.GoldenVersion + ")"
	}
	fmt.Fprintf(w, "Retrieval of %d queries with %s%s\n\n", r.Queries, r.Search, version)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "QUERY\tFIRST\tR@5\tNDCG@10\tAP\tMISSED")
	for _, q := range r.PerQuery {
		first := "-"
		if q.FirstRelevant > 0 {
			first = strconv.Itoa(q.FirstRelevant)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", q.ID, first, f2(q.RecallAt5), f2(q.NDCGAt10), f2(q.AP), strings.Join(q.Missed, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s\n", MetricsLine(r.Metrics))
	if g := r.Gate; g != nil {
		if g.Passed {
			fmt.Fprintf(w, "Gate against %s (tolerance %s): passed\n", g.Baseline, f2(g.Tolerance))
		} else {
			var parts []string
			for _, c := range g.Regressions {
				parts = append(parts, fmt.Sprintf("%s %s → %s", c.Metric, f4(c.Baseline), f4(c.Current)))
			}
			fmt.Fprintf(w, "Gate against %s (tolerance %s): FAILED: %s\n", g.Baseline, f2(g.Tolerance), strings.Join(parts, ", "))
		}
	}
	return nil
}

// MetricsLine renders the aggregated metrics on one line.
func MetricsLine(m Metrics) string {
	ks := make([]int, 0, len(m.RecallAt))
	for k := range m.RecallAt {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	var parts []string
	for _, k := range ks {
		parts = append(parts, fmt.Sprintf("Recall@%d %s", k, f4(m.RecallAt[k])))
	}
	parts = append(parts, "MRR "+f4(m.MRR), "nDCG@10 "+f4(m.NDCGAt10), "MAP "+f4(m.MAP))
	return strings.Join(parts, " · ")
}

func f2(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }
func f4(f float64) string { return strconv.FormatFloat(f, 'f', 4, 64) }
