// Package trace writes a run's trace.jsonl: one JSON object per line, one line per finished
// request and per run event (seed 000 §17.1: ts, kind, request_id, method, duration_ms, error,
// rss_mb, cpu_pct), readable with jq or any line-oriented tool.
//
// The [Writer] encodes by hand into its one buffer, with the constant parts of a line
// pre-encoded, without reflection or allocation per event, so tracing every request costs well
// under a microsecond: the trace never becomes the load generator's bottleneck.
package trace
