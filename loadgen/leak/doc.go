// Package leak judges whether a server's memory grows without bound under load, from readings
// of its resident memory over a run (loadgen/resources takes them).
//
// [Analyze] follows the leak detector of the load tester's design: readings of the warm-up are
// left out; a least-squares line through the rest gives the slope (bytes per second), its
// intercept and R²; the slope times the run's duration is the predicted growth; a fit with
// R² < 0.5 says nothing ("indeterminate"). Growth per call comes from a second line, of memory
// against the number of calls finished.
//
// Warm-up happens per call more than per second: the V8 heaps of server-everything and
// server-memory grow by about 3 KiB per call over their first ~10,000 small calls, until their
// first full collection, then saw between ~100 and ~125 MiB with a period of 15,000–18,000
// calls (interop/leak_test.go); over 20 s at 200 calls/s server-everything grew by 9 KiB per
// call. Nothing tells such a climb from a slow leak before it ends, so a leak verdict needs
// [Options.MinCalls] (10,000) calls after the warm-up; with fewer it is at most
// "indeterminate" — unless the growth per call is far above any warm-up's
// ([Options.StrongBytesPerCall], 32 KiB): a server retaining 64 KiB per call is named a leak
// in a 20 s soak at 200 calls/s. A soak that should say "no_leak" of such a server needs a few of its
// periods (three minutes at 600 calls/s did; 45 s gave "no_leak" or "indeterminate").
//
// A least-squares line calls anything that ends higher than it started a leak, and healthy
// servers do that: a Node/V8 server's heap grows by tens of megabytes over its first thousands
// of calls while the JIT compiles, caches fill and the young generation is sized, then it
// levels off; a pool or cache grows in one step and stays. So a leak must also pass two tests
// made with statistics that outliers and garbage-collection sawtooth do not move:
//
//   - Enough growth: the Theil–Sen slope (the median of the slopes between every two
//     readings) times the run's duration must reach [Options.MinGrowth]. A flat or sawtooth
//     series has a Theil–Sen slope near zero whatever its least-squares fit says.
//   - Growth that goes on: the Theil–Sen slope of the last half of the window must be at least
//     half the whole window's, and the window's four quarters (their medians) must each rise
//     over the one before by at least a tenth of the whole rise, none by more than 80 % of
//     it. A series that levels off has a late slope near zero ("no_leak: growth levels off");
//     one that slows down without levelling off is "indeterminate", as is one that grows in a
//     few steps with flat stretches between; a single step is "no_leak" (a pool or cache
//     filling once).
//
// Theil–Sen on the later window was preferred to fitting a saturating curve: it needs no model
// of how a healthy heap settles, no iterative fit that can fail to converge, and it stays
// right when the series is noisy; comparing it with the whole window's slope is what tells a
// plateau from a line.
package leak
