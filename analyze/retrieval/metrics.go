package retrieval

import (
	"math"
	"slices"
)

// Label grades one tool for one query: 2 primary, 1 related, 0 (or absent) irrelevant.
type Label struct {
	Tool      string `json:"tool" yaml:"tool"`
	Relevance int    `json:"relevance" yaml:"relevance"`
}

// relevant returns the tools with relevance ≥ 1 and the relevance of every labelled tool.
func relevant(labels []Label) (int, map[string]int) {
	grade := map[string]int{}
	n := 0
	for _, l := range labels {
		grade[l.Tool] = l.Relevance
		if l.Relevance >= 1 {
			n++
		}
	}
	return n, grade
}

// RecallAtK is the share of the relevant tools found in the first k of ranked; 0 when no tool
// is relevant.
func RecallAtK(ranked []string, labels []Label, k int) float64 {
	n, grade := relevant(labels)
	if n == 0 {
		return 0
	}
	found := 0
	seen := map[string]bool{} // a repeated tool counts once
	for i, t := range ranked {
		if i >= k {
			break
		}
		if grade[t] >= 1 && !seen[t] {
			found++
		}
		seen[t] = true
	}
	return float64(found) / float64(n)
}

// ReciprocalRank is 1/rank of the first relevant tool in ranked, 0 when none is.
func ReciprocalRank(ranked []string, labels []Label) float64 {
	_, grade := relevant(labels)
	for i, t := range ranked {
		if grade[t] >= 1 {
			return 1 / float64(i+1)
		}
	}
	return 0
}

// NDCGAtK is the normalised discounted cumulative gain of the first k of ranked: gain the
// graded relevance, discount log2(rank+1); 1 for the ideal order, 0 when no relevant tool is
// in the first k.
func NDCGAtK(ranked []string, labels []Label, k int) float64 {
	_, grade := relevant(labels)
	dcg := 0.0
	seen := map[string]bool{}
	for i, t := range ranked {
		if i >= k {
			break
		}
		if !seen[t] {
			dcg += float64(grade[t]) / math.Log2(float64(i+2))
		}
		seen[t] = true
	}
	var ideal []int
	for _, g := range grade {
		if g > 0 {
			ideal = append(ideal, g)
		}
	}
	slices.Sort(ideal)
	slices.Reverse(ideal)
	idcg := 0.0
	for i, g := range ideal {
		if i >= k {
			break
		}
		idcg += float64(g) / math.Log2(float64(i+2))
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

// AveragePrecision is the mean of the precision at the rank of each relevant tool found,
// divided by all the relevant tools (so those not found count as 0); binary relevance.
func AveragePrecision(ranked []string, labels []Label) float64 {
	n, grade := relevant(labels)
	if n == 0 {
		return 0
	}
	hits, sum := 0, 0.0
	seen := map[string]bool{}
	for i, t := range ranked {
		if grade[t] >= 1 && !seen[t] {
			hits++
			sum += float64(hits) / float64(i+1)
		}
		seen[t] = true
	}
	return sum / float64(n)
}
