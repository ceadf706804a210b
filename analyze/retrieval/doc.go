// Package retrieval measures how well a model's tool search finds the right tools: given a
// golden set (queries, each with graded relevant tools) and a search — the server's own
// search tool, or [BM25] over the tool list as the baseline — it computes Recall@k, MRR,
// nDCG@10 and MAP, and [Compare] gates a run against an earlier one.
//
// Metrics, per query, averaged over queries: Recall@k is the share of the relevant tools
// (relevance ≥ 1) found in the top k; the reciprocal rank is 1/rank of the first relevant
// tool (0 if none); nDCG@k uses the graded relevance as a linear gain with a log2(rank+1)
// discount, normalised by the ideal ordering; average precision is the mean of the precision
// at the rank of each relevant tool found, divided by the number of relevant tools.
package retrieval
