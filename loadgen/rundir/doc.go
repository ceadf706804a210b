// Package rundir writes and reads a load run's directory (seed 000 §6): config.json (the exact
// resolved configuration), server.stderr.log, trace.jsonl, metrics.json (with the histograms
// serialized losslessly), summary.json (the verdict for CI), report.md and report.html.
// [Render] rebuilds the reports from metrics.json alone, so `mcpspec report DIR` and
// `mcpspec merge` produce the same pages as the run did.
package rundir
