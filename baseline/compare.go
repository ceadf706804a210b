package baseline

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/internal/stats"
	"github.com/mcpspec/mcpspec/result"
)

// CompareOptions tunes [Compare]. A nil *CompareOptions, and any zero field, means the default.
type CompareOptions struct {
	// LatencyRelative is how much a test's p95 latency may grow, as a fraction of the baseline's
	// (0.20 = 20%), before it counts as slower. Default 0.20.
	LatencyRelative float64 `json:"latencyRelative"`
	// LatencyAbsolute is how much it may grow in absolute terms; both tolerances must be
	// exceeded, so a 1ms test jumping to 2ms (+100%) is noise, not a regression. Default 5ms.
	LatencyAbsolute time.Duration `json:"latencyAbsoluteNs"`
	// MinSamples is how many latency samples each side needs for the two tolerances above to
	// decide alone (default 5). A p95 of fewer samples is one or two calls, which a loaded
	// machine moves by tens of milliseconds (a 15ms test measured 39–54ms on unchanged
	// reruns): such a test is slower only when its p95 also grew by more than NoiseFloor.
	MinSamples int `json:"minSamples"`
	// NoiseFloor is the absolute growth a test with fewer than MinSamples samples on either
	// side must exceed, besides both tolerances, to count as slower or faster (default 100ms).
	NoiseFloor time.Duration `json:"noiseFloorNs"`
	// IgnoreLatency turns latency comparison off (for runs on noisy shared machines).
	IgnoreLatency bool `json:"ignoreLatency,omitempty"`
}

// Defaults of [CompareOptions].
const (
	DefaultLatencyRelative = 0.20
	DefaultLatencyAbsolute = 5 * time.Millisecond
	DefaultMinSamples      = 5
	DefaultNoiseFloor      = 100 * time.Millisecond
)

func (o *CompareOptions) resolve() CompareOptions {
	var v CompareOptions
	if o != nil {
		v = *o
	}
	if v.LatencyRelative <= 0 {
		v.LatencyRelative = DefaultLatencyRelative
	}
	if v.LatencyAbsolute <= 0 {
		v.LatencyAbsolute = DefaultLatencyAbsolute
	}
	if v.MinSamples <= 0 {
		v.MinSamples = DefaultMinSamples
	}
	if v.NoiseFloor <= 0 {
		v.NoiseFloor = DefaultNoiseFloor
	}
	return v
}

// Kind classifies one change between a baseline and the current run.
type Kind string

const (
	// Regressed: a test that passed in the baseline now fails or errors. A regression.
	Regressed Kind = "regressed"
	// Fixed: a test that failed or errored in the baseline now passes — the baseline is stale
	// and should be refreshed. Not a regression.
	Fixed Kind = "fixed"
	// Changed: any other status change (failed → error, passed → skipped …). Not a regression.
	Changed Kind = "changed"
	// Added: a test or tool that only the current run has. Not a regression.
	Added Kind = "added"
	// Removed: a test only the baseline has (not a regression), or a tool the server no longer
	// lists (a regression: clients calling it break).
	Removed Kind = "removed"
	// Slower: a test's p95 latency grew beyond both tolerances. A regression.
	Slower Kind = "slower"
	// Faster: a test's p95 latency shrank beyond both tolerances. Not a regression.
	Faster Kind = "faster"
	// Breaking: a tool's schema changed in a way that breaks existing clients. A regression.
	Breaking Kind = "breaking"
	// Compatible: a tool's schema or description changed without breaking clients.
	Compatible Kind = "compatible"
)

// Diff is the comparison of a current run with a baseline. Every slice is in a stable order:
// tests in the current run's order (removed tests after, in the baseline's order), tools by
// server then name.
type Diff struct {
	Base    RunInfo        `json:"base"`
	Current RunInfo        `json:"current"`
	Options CompareOptions `json:"options"`
	Tests   []TestChange   `json:"tests"`
	Latency []LatencyDelta `json:"latency"`
	Tools   []ToolChange   `json:"tools"`
	// Compared counts the tests present in both runs.
	Compared int `json:"compared"`
	// LatencyCompared counts the tests whose latency was compared (passed on both sides, with
	// samples); NoiseFloored how many of them had fewer than Options.MinSamples samples on
	// either side, and so were judged against Options.NoiseFloor.
	LatencyCompared int `json:"latencyCompared"`
	NoiseFloored    int `json:"noiseFloored"`
}

// RunInfo identifies one side of a comparison.
type RunInfo struct {
	ID        string      `json:"id"`
	StartedAt time.Time   `json:"startedAt"`
	Git       *result.Git `json:"git,omitempty"`
	Counts    Counts      `json:"counts"`
}

// Counts tallies test outcomes (the JSON form of [result.Counts]).
type Counts struct {
	Total   int `json:"total"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Errored int `json:"errored"`
	Skipped int `json:"skipped"`
}

// countsOf tallies a run's tests, tolerating nil collections and tests.
func countsOf(r *result.Run) Counts {
	var c Counts
	for _, t := range index(r).list {
		c.Total++
		switch t.t.Status {
		case result.Passed:
			c.Passed++
		case result.Failed:
			c.Failed++
		case result.Errored:
			c.Errored++
		case result.Skipped:
			c.Skipped++
		}
	}
	return c
}

// TestChange is a test whose presence or status differs.
type TestChange struct {
	Kind       Kind   `json:"kind"`
	Collection string `json:"collection"`
	// Test is the test's name; ID its id when it has one (tests are matched by collection name
	// and id, or name when there is no id).
	Test   string        `json:"test"`
	ID     string        `json:"id,omitempty"`
	Before result.Status `json:"before,omitempty"`
	After  result.Status `json:"after,omitempty"`
}

// LatencyDelta is a test whose p95 latency moved beyond the tolerances.
//
// The p95 of a test is the nearest-rank 95th percentile of the latencies of its attempts that
// measured one (a retried test has several samples); with a single sample it is that sample, and
// a test without attempts uses its own Latency. Only tests that passed on both sides are
// compared: a failure's latency says little, and its status change is reported anyway.
type LatencyDelta struct {
	Kind        Kind          `json:"kind"`
	Collection  string        `json:"collection"`
	Test        string        `json:"test"`
	ID          string        `json:"id,omitempty"`
	BaseP95     time.Duration `json:"baseP95Ns"`
	CurrentP95  time.Duration `json:"currentP95Ns"`
	BaseSamples int           `json:"baseSamples"`
	CurSamples  int           `json:"currentSamples"`
	// Tolerance is the absolute change the p95 had to exceed: the LatencyAbsolute tolerance,
	// or the NoiseFloor when either side had fewer than MinSamples samples.
	Tolerance time.Duration `json:"toleranceNs"`
}

// Delta is CurrentP95 − BaseP95.
func (l LatencyDelta) Delta() time.Duration { return l.CurrentP95 - l.BaseP95 }

// Percent is the change relative to the baseline, in percent.
func (l LatencyDelta) Percent() float64 {
	if l.BaseP95 == 0 {
		return 0
	}
	return float64(l.CurrentP95-l.BaseP95) * 100 / float64(l.BaseP95)
}

// ToolChange is a tool added, removed, or whose schema or description changed.
type ToolChange struct {
	Kind    Kind           `json:"kind"`
	Server  string         `json:"server"`
	Tool    string         `json:"tool"`
	Changes []SchemaChange `json:"changes,omitempty"`
}

// SchemaChange is one difference inside a tool definition.
type SchemaChange struct {
	Breaking bool `json:"breaking"`
	// Where is "input", "output" or "description".
	Where string `json:"where"`
	// Path locates the schema node: "(root)", "user.name", "tags[]".
	Path string `json:"path"`
	// What says what changed, in words. A change the classifier could not decide (a remote
	// $ref, overlapping oneOf branches, a keyword it does not analyse …) ends in
	// "(not analysed; review)" and is never Breaking.
	What string `json:"what"`
}

// Review reports whether the change was left for a person to judge: not analysed, so neither
// breaking nor known to be compatible.
func (c SchemaChange) Review() bool { return strings.HasSuffix(c.What, reviewSuffix) }

// MarshalJSON writes the change with "review": true when it was left for a person to judge, so
// JSON readers need not parse What.
func (c SchemaChange) MarshalJSON() ([]byte, error) {
	type plain SchemaChange
	return json.Marshal(struct {
		plain
		Review bool `json:"review,omitempty"`
	}{plain(c), c.Review()})
}

// Regressed reports whether the current run is worse than the baseline: a test went from
// passing to failing or erroring, a test got slower beyond the tolerances, a tool disappeared,
// or a tool's schema changed incompatibly. Fixed (stale) tests, additions and compatible
// changes are not regressions.
func (d *Diff) Regressed() bool { return len(d.Regressions()) > 0 }

// Regressions counts the regressions by kind; an empty map when there are none.
func (d *Diff) Regressions() map[Kind]int {
	n := map[Kind]int{}
	for _, t := range d.Tests {
		if t.Kind == Regressed {
			n[Regressed]++
		}
	}
	for _, l := range d.Latency {
		if l.Kind == Slower {
			n[Slower]++
		}
	}
	for _, t := range d.Tools {
		if t.Kind == Removed || t.Kind == Breaking {
			n[t.Kind]++
		}
	}
	return n
}

// Empty reports whether nothing at all changed.
func (d *Diff) Empty() bool { return len(d.Tests) == 0 && len(d.Latency) == 0 && len(d.Tools) == 0 }

// Compare diffs current against base; a nil run counts as an empty one. Tests are matched by collection
// name and test id (or name); tools by server name and tool name across all collections.
func Compare(base, current *result.Run, opts *CompareOptions) *Diff {
	o := opts.resolve()
	if base == nil {
		base = &result.Run{}
	}
	if current == nil {
		current = &result.Run{}
	}
	d := &Diff{Base: info(base), Current: info(current), Options: o,
		Tests: []TestChange{}, Latency: []LatencyDelta{}, Tools: []ToolChange{}}

	baseTests := index(base)
	seen := map[string]bool{}
	for _, ct := range index(current).list {
		bt, ok := baseTests.byKey[ct.key]
		if !ok {
			d.Tests = append(d.Tests, TestChange{Kind: Added, Collection: ct.col, Test: ct.t.Name, ID: ct.t.ID, After: ct.t.Status})
			continue
		}
		seen[ct.key] = true
		d.Compared++
		if k, changed := statusChange(bt.t.Status, ct.t.Status); changed {
			d.Tests = append(d.Tests, TestChange{Kind: k, Collection: ct.col, Test: ct.t.Name, ID: ct.t.ID, Before: bt.t.Status, After: ct.t.Status})
		}
		if !o.IgnoreLatency && bt.t.Status == result.Passed && ct.t.Status == result.Passed {
			l, judged, ok := latencyChange(o, bt.t, ct.t)
			if judged {
				d.LatencyCompared++
				if l.Tolerance > o.LatencyAbsolute {
					d.NoiseFloored++
				}
			}
			if ok {
				l.Collection, l.Test, l.ID = ct.col, ct.t.Name, ct.t.ID
				d.Latency = append(d.Latency, l)
			}
		}
	}
	for _, bt := range baseTests.list {
		if !seen[bt.key] {
			d.Tests = append(d.Tests, TestChange{Kind: Removed, Collection: bt.col, Test: bt.t.Name, ID: bt.t.ID, Before: bt.t.Status})
		}
	}
	d.Tools = diffTools(tools(base), tools(current))
	return d
}

func info(r *result.Run) RunInfo {
	return RunInfo{ID: r.ID, StartedAt: r.StartedAt, Git: r.Git, Counts: countsOf(r)}
}

// statusChange classifies a status transition.
func statusChange(before, after result.Status) (Kind, bool) {
	if before == after {
		return "", false
	}
	bad := func(s result.Status) bool { return s == result.Failed || s == result.Errored }
	switch {
	case before == result.Passed && bad(after):
		return Regressed, true
	case bad(before) && after == result.Passed:
		return Fixed, true
	default:
		return Changed, true
	}
}

type keyedTest struct {
	key, col string
	t        *result.Test
}

type testIndex struct {
	list  []keyedTest
	byKey map[string]keyedTest
}

// index keys every test by collection name and id (or name); a repeated key gets "#2", "#3" …
// in order, so duplicates still pair up positionally.
func index(r *result.Run) testIndex {
	ix := testIndex{byKey: map[string]keyedTest{}}
	count := map[string]int{}
	for _, c := range r.Collections {
		if c == nil {
			continue
		}
		for _, t := range c.Tests {
			if t == nil {
				continue
			}
			id := t.ID
			if id == "" {
				id = t.Name
			}
			k := c.Name + "\x00" + id
			count[k]++
			if n := count[k]; n > 1 {
				k += "#" + strconv.Itoa(n)
			}
			kt := keyedTest{key: k, col: c.Name, t: t}
			ix.list = append(ix.list, kt)
			ix.byKey[k] = kt
		}
	}
	return ix
}

// samples are the latencies a test measured: its attempts' (non-zero) latencies, else its own.
func samples(t *result.Test) []time.Duration {
	var ds []time.Duration
	for _, a := range t.Attempts {
		if a.Latency > 0 {
			ds = append(ds, a.Latency)
		}
	}
	if len(ds) == 0 && t.Latency > 0 {
		ds = append(ds, t.Latency)
	}
	return ds
}

// P95 is the nearest-rank 95th percentile of ds (0 for none).
func P95(ds []time.Duration) time.Duration { return stats.Percentile(ds, 95) }

// latencyChange compares p95s against both tolerances, the absolute one raised to the noise
// floor when either side has too few samples for its p95 to be more than one call.
// judged says both sides had samples; moved that the p95 moved beyond the tolerances.
func latencyChange(o CompareOptions, bt, ct *result.Test) (l LatencyDelta, judged, moved bool) {
	bs, cs := samples(bt), samples(ct)
	if len(bs) == 0 || len(cs) == 0 {
		return LatencyDelta{}, false, false
	}
	b, c := P95(bs), P95(cs)
	l = LatencyDelta{BaseP95: b, CurrentP95: c, BaseSamples: len(bs), CurSamples: len(cs), Tolerance: o.LatencyAbsolute}
	if min(len(bs), len(cs)) < o.MinSamples {
		l.Tolerance = max(l.Tolerance, o.NoiseFloor)
	}
	beyond := func(lo, hi time.Duration) bool {
		return float64(hi) > float64(lo)*(1+o.LatencyRelative) && hi-lo > l.Tolerance
	}
	switch {
	case beyond(b, c):
		l.Kind = Slower
	case beyond(c, b):
		l.Kind = Faster
	default:
		return l, true, false
	}
	return l, true, true
}

// tools merges the tools/list snapshots of every collection by server; the first collection to
// list a server wins.
func tools(r *result.Run) map[string]map[string]result.Tool {
	out := map[string]map[string]result.Tool{}
	for _, c := range r.Collections {
		if c == nil {
			continue
		}
		for _, server := range slices.Sorted(maps.Keys(c.Tools)) {
			if _, done := out[server]; done {
				continue
			}
			m := map[string]result.Tool{}
			for _, t := range c.Tools[server] {
				if _, dup := m[t.Name]; !dup {
					m[t.Name] = t
				}
			}
			out[server] = m
		}
	}
	return out
}

// diffTools compares the tool snapshots of servers present on both sides. A server that only one
// run snapshotted is not compared (it was probably not connected), rather than reported as every
// tool added or removed.
func diffTools(base, cur map[string]map[string]result.Tool) []ToolChange {
	out := []ToolChange{}
	for _, server := range slices.Sorted(maps.Keys(cur)) {
		bt, ok := base[server]
		if !ok {
			continue
		}
		ct := cur[server]
		names := map[string]bool{}
		for n := range bt {
			names[n] = true
		}
		for n := range ct {
			names[n] = true
		}
		for _, n := range slices.Sorted(maps.Keys(names)) {
			b, inBase := bt[n]
			c, inCur := ct[n]
			switch {
			case !inBase:
				out = append(out, ToolChange{Kind: Added, Server: server, Tool: n})
			case !inCur:
				out = append(out, ToolChange{Kind: Removed, Server: server, Tool: n})
			default:
				if ch := diffTool(b, c); len(ch) > 0 {
					k := Compatible
					for _, x := range ch {
						if x.Breaking {
							k = Breaking
						}
					}
					out = append(out, ToolChange{Kind: k, Server: server, Tool: n, Changes: ch})
				}
			}
		}
	}
	return out
}
