// Package loadgen is mcpspec's load engine: it drives a server under test with a scenario and
// measures it without lying about latency.
//
// A [Config] names a scenario (sustained, spike, ramp, soak, cold_start, pattern), a model
// (open: an arrival rate, latency measured from each request's intended send time, with a cap
// on requests in flight that is reported when hit; closed: N workers), a workload (weighted
// tool calls, a collection's tests with their assertions, or multi-step patterns), how
// sessions are used (one shared session with many calls in flight, a pool, or a new session
// per iteration) and its bounds (a duration and/or a number of iterations: every loop ends).
//
// When to send (loadgen/pacer) is kept apart from who sends: one executor type per model
// (open rate, closed workers, cold starts), each with Run(ctx, out) as k6's executors; workers
// hand their samples in batches to one aggregator (loadgen/metrics), which keeps HdrHistograms
// and writes the trace (loadgen/trace); the run is summarised once at the end into a
// metrics.Run, judged by loadgen/analysis and loadgen/threshold. [Run] returns it; rundir
// writes it to disk. Cancelling the context stops the run cleanly: what was measured so far
// is returned, marked interrupted.
//
// Servers are opened through session/serverconn only. A resource [Sampler] ([ResourceSampler]
// adapts loadgen/resources) and a [LeakAnalyzer] ([LeakAnalysis], loadgen/leak) plug in
// through [Config]; the run records what was sampled, or why nothing was (metrics.Sampling).
package loadgen
