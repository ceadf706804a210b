// Package metrics turns the load engine's samples into the numbers of a run: exact latency
// percentiles from HdrHistograms, throughput, errors by category, a per-second timeline, and
// the metrics.json model ([Run]) that carries them with its histograms serialized losslessly,
// so runs of several shards merge exactly ([Merge]) instead of averaging percentiles.
//
// The shape is vegeta's Metrics.Add / Metrics.Close: samples stream into one [Aggregator]
// (workers hand it batches, so the hot path takes no lock), and the run is summarised once, by
// [Derive], which also serves a merged run.
//
// Latency is measured from the intended send time ([Sample.Intended]): in the open model a
// request the engine could not send on time, or that waited behind a stalled server, counts
// the wait. The service time (from the moment the request actually left) is kept beside it, so
// a report can show how much of the latency was queueing.
package metrics
