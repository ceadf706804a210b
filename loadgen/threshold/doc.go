// Package threshold parses load thresholds ("p99<=500ms", "error_rate<1%", "rps>=200",
// "p95:echo<=50ms") and judges a run against them (seed 000 §15.4): every threshold becomes a
// [metrics.ThresholdResult], the failed ones violations, and the run passes when none failed.
// A threshold on something the run did not measure (memory without a resource sampler) fails:
// it is never passed silently; a leak threshold while the leak verdict is indeterminate shows
// its figure without judging it, as the verdict does.
//
// [EvaluateGates] adds the default gates ([Gate]): without a single threshold, a run fails when
// the server crashed, a request hung, an answer was malformed, assertions failed or the leak
// verdict is leak. A gate can be turned off, and a threshold on its metric judges in its place.
package threshold
