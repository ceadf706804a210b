// Package report renders a load run (a metrics.Run) for people: report.md, and report.html — one
// self-contained page with inline SVG charts (latency percentiles over time, throughput against
// the offered rate, errors, the server's RSS with the leak regression line), no script and no
// external resource, so it opens from a CI artefact or an e-mail as it is.
package report
