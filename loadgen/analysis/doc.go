// Package analysis says what a load run's numbers mean: A–F grades for latency, throughput and
// errors; a ramp's breaking point (the last good step before p99 or the error rate broke
// away); a spike's recovery time; the drift of latency over a run; and a few sentences for the
// report. It reads and annotates a metrics.Run, so a merged or re-rendered run is judged the
// same way as a fresh one.
package analysis
