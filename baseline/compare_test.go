package baseline

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/result"
)

const ms = time.Millisecond

// tst builds a test with one attempt per latency (all passed unless status says otherwise).
func tst(id string, status result.Status, lats ...time.Duration) *result.Test {
	t := &result.Test{ID: id, Name: "test " + id, Kind: "tool", Status: status}
	for _, l := range lats {
		t.Attempts = append(t.Attempts, result.Attempt{Status: status, Latency: l})
		t.Latency = l
	}
	return t
}

func runOf(tests ...*result.Test) *result.Run {
	return &result.Run{SchemaVersion: "1", ID: "r", StartedAt: t0,
		Collections: []*result.Collection{{Name: "c", StartedAt: t0, Tests: tests}}}
}

func TestCompareTests(t *testing.T) {
	P, F, E, S := result.Passed, result.Failed, result.Errored, result.Skipped
	cases := []struct {
		name      string
		base, cur []*result.Test
		want      []TestChange
		regressed bool
	}{
		{"unchanged", []*result.Test{tst("a", P)}, []*result.Test{tst("a", P)}, nil, false},
		{"pass to fail", []*result.Test{tst("a", P)}, []*result.Test{tst("a", F)},
			[]TestChange{{Kind: Regressed, Collection: "c", Test: "test a", ID: "a", Before: P, After: F}}, true},
		{"pass to error", []*result.Test{tst("a", P)}, []*result.Test{tst("a", E)},
			[]TestChange{{Kind: Regressed, Collection: "c", Test: "test a", ID: "a", Before: P, After: E}}, true},
		{"fail to pass is stale, not a regression", []*result.Test{tst("a", F)}, []*result.Test{tst("a", P)},
			[]TestChange{{Kind: Fixed, Collection: "c", Test: "test a", ID: "a", Before: F, After: P}}, false},
		{"error to pass is stale", []*result.Test{tst("a", E)}, []*result.Test{tst("a", P)},
			[]TestChange{{Kind: Fixed, Collection: "c", Test: "test a", ID: "a", Before: E, After: P}}, false},
		{"fail to error is a change", []*result.Test{tst("a", F)}, []*result.Test{tst("a", E)},
			[]TestChange{{Kind: Changed, Collection: "c", Test: "test a", ID: "a", Before: F, After: E}}, false},
		{"pass to skipped is a change", []*result.Test{tst("a", P)}, []*result.Test{tst("a", S)},
			[]TestChange{{Kind: Changed, Collection: "c", Test: "test a", ID: "a", Before: P, After: S}}, false},
		{"new test", []*result.Test{tst("a", P)}, []*result.Test{tst("a", P), tst("b", F)},
			[]TestChange{{Kind: Added, Collection: "c", Test: "test b", ID: "b", After: F}}, false},
		{"removed test", []*result.Test{tst("a", P), tst("b", P)}, []*result.Test{tst("a", P)},
			[]TestChange{{Kind: Removed, Collection: "c", Test: "test b", ID: "b", Before: P}}, false},
		{"matched by name without id",
			[]*result.Test{{Name: "n", Status: P}}, []*result.Test{{Name: "n", Status: F}},
			[]TestChange{{Kind: Regressed, Collection: "c", Test: "n", Before: P, After: F}}, true},
		{"duplicate names pair in order",
			[]*result.Test{{Name: "n", Status: P}, {Name: "n", Status: F}}, []*result.Test{{Name: "n", Status: P}, {Name: "n", Status: P}},
			[]TestChange{{Kind: Fixed, Collection: "c", Test: "n", Before: F, After: P}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Compare(runOf(tc.base...), runOf(tc.cur...), &CompareOptions{IgnoreLatency: true})
			want := tc.want
			if want == nil {
				want = []TestChange{}
			}
			if diff := cmp.Diff(want, d.Tests); diff != "" {
				t.Errorf("Tests (-want +got):\n%s", diff)
			}
			if d.Regressed() != tc.regressed {
				t.Errorf("Regressed() = %v, want %v", d.Regressed(), tc.regressed)
			}
		})
	}
}

// many is n samples of d, the last one last instead when given.
func many(n int, d time.Duration, last ...time.Duration) []time.Duration {
	ds := make([]time.Duration, n)
	for i := range ds {
		ds[i] = d
	}
	if len(last) > 0 {
		ds[n-1] = last[0]
	}
	return ds
}

func TestCompareLatency(t *testing.T) {
	P, F := result.Passed, result.Failed
	five := func(d time.Duration, last ...time.Duration) *result.Test { return tst("a", P, many(5, d, last...)...) }
	cases := []struct {
		name      string
		opts      *CompareOptions
		base      *result.Test
		cur       *result.Test
		kind      Kind // "" = no latency change reported
		base95    time.Duration
		cur95     time.Duration
		samplesB  int
		samplesC  int
		tolerance time.Duration
	}{
		{"slower beyond both tolerances", nil, five(10 * ms), five(20 * ms), Slower, 10 * ms, 20 * ms, 5, 5, 5 * ms},
		{"relative only is noise (1ms→3ms)", nil, five(1 * ms), five(3 * ms), "", 0, 0, 0, 0, 0},
		{"absolute only is noise (100ms→110ms)", nil, five(100 * ms), five(110 * ms), "", 0, 0, 0, 0, 0},
		{"just at the tolerance is not slower", nil, five(100 * ms), five(120 * ms), "", 0, 0, 0, 0, 0},
		{"faster beyond both", nil, five(50 * ms), five(20 * ms), Faster, 50 * ms, 20 * ms, 5, 5, 5 * ms},
		{"tighter options", &CompareOptions{LatencyRelative: 0.05, LatencyAbsolute: time.Millisecond}, five(100 * ms), five(110 * ms), Slower, 100 * ms, 110 * ms, 5, 5, time.Millisecond},
		{"ignored", &CompareOptions{IgnoreLatency: true}, five(10 * ms), five(90 * ms), "", 0, 0, 0, 0, 0},
		{"p95 over attempts", nil, five(10*ms, 12*ms), five(10*ms, 40*ms), Slower, 12 * ms, 40 * ms, 5, 5, 5 * ms},
		{"failing side not compared", nil, five(10 * ms), tst("a", F, many(5, 90*ms)...), "", 0, 0, 0, 0, 0},
		// One sample a side: a loaded machine moved an unchanged 15ms test to 39–54ms on
		// three reruns out of three. Within the noise floor that is not a regression…
		{"one sample: noise on a loaded machine", nil, tst("a", P, 15*ms), tst("a", P, 54*ms), "", 0, 0, 0, 0, 0},
		{"few samples on one side only", nil, five(15 * ms), tst("a", P, 54*ms), "", 0, 0, 0, 0, 0},
		// … while a slowdown beyond it still is, with the floor it was judged against.
		{"one sample: a real slowdown", nil, tst("a", P, 15*ms), tst("a", P, 400*ms), Slower, 15 * ms, 400 * ms, 1, 1, 100 * ms},
		{"test latency when no attempts", nil, &result.Test{ID: "a", Name: "test a", Status: P, Latency: 10 * ms},
			&result.Test{ID: "a", Name: "test a", Status: P, Latency: 300 * ms}, Slower, 10 * ms, 300 * ms, 1, 1, 100 * ms},
		{"noise floor set by the caller", &CompareOptions{NoiseFloor: 20 * ms}, tst("a", P, 15*ms), tst("a", P, 54*ms), Slower, 15 * ms, 54 * ms, 1, 1, 20 * ms},
		{"enough samples set by the caller", &CompareOptions{MinSamples: 1}, tst("a", P, 15*ms), tst("a", P, 54*ms), Slower, 15 * ms, 54 * ms, 1, 1, 5 * ms},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Compare(runOf(tc.base), runOf(tc.cur), tc.opts)
			var want []LatencyDelta
			if tc.kind != "" {
				want = []LatencyDelta{{Kind: tc.kind, Collection: "c", Test: "test a", ID: "a",
					BaseP95: tc.base95, CurrentP95: tc.cur95, BaseSamples: tc.samplesB, CurSamples: tc.samplesC, Tolerance: tc.tolerance}}
			} else {
				want = []LatencyDelta{}
			}
			if diff := cmp.Diff(want, d.Latency); diff != "" {
				t.Errorf("Latency (-want +got):\n%s", diff)
			}
			if got := d.Regressed(); got != (tc.kind == Slower || tc.cur.Status == F) {
				t.Errorf("Regressed() = %v", got)
			}
		})
	}
}

// TestLatencyGateSaysWhatItUsed: the text report states the gate, and that tests with too few
// samples were held to the noise floor.
func TestLatencyGateSaysWhatItUsed(t *testing.T) {
	d := Compare(runOf(tst("a", result.Passed, 15*ms), tst("b", result.Passed, many(5, 10*ms)...)),
		runOf(tst("a", result.Passed, 54*ms), tst("b", result.Passed, many(5, 10*ms)...)), nil)
	if d.Regressed() || d.LatencyCompared != 2 || d.NoiseFloored != 1 {
		t.Fatalf("regressed %v, compared %d, noise-floored %d; want false, 2, 1", d.Regressed(), d.LatencyCompared, d.NoiseFloored)
	}
	var b strings.Builder
	if err := d.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := "Latency gate: a p95 change beyond 20% and 5.0ms; 1 of the 2 tests compared had fewer than 5 samples on a side, too few to tell noise from a change, so they needed more than 100ms."
	if !strings.Contains(b.String(), want) {
		t.Errorf("text report lacks %q:\n%s", want, b.String())
	}
}

func TestP95(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(101-i)*ms)
	}
	for _, tc := range []struct {
		in   []time.Duration
		want time.Duration
	}{{nil, 0}, {[]time.Duration{7 * ms}, 7 * ms}, {[]time.Duration{1 * ms, 9 * ms}, 9 * ms}, {ds, 95 * ms}} {
		if got := P95(tc.in); got != tc.want {
			t.Errorf("P95(%d samples) = %v, want %v", len(tc.in), got, tc.want)
		}
	}
}

// withTools builds a run whose collection lists the tools per server.
func withTools(tools map[string][]result.Tool) *result.Run {
	r := runOf()
	r.Collections[0].Tools = tools
	return r
}

func tool(name, in, out string) result.Tool {
	t := result.Tool{Name: name, Description: "d"}
	if in != "" {
		t.InputSchema = json.RawMessage(in)
	}
	if out != "" {
		t.OutputSchema = json.RawMessage(out)
	}
	return t
}

func TestCompareToolSet(t *testing.T) {
	base := withTools(map[string][]result.Tool{"s": {tool("keep", "", ""), tool("gone", "", "")}, "only-base": {tool("x", "", "")}})
	cur := withTools(map[string][]result.Tool{"s": {tool("keep", "", ""), tool("new", "", "")}, "only-cur": {tool("y", "", "")}})
	d := Compare(base, cur, nil)
	want := []ToolChange{
		{Kind: Removed, Server: "s", Tool: "gone"},
		{Kind: Added, Server: "s", Tool: "new"},
	}
	if diff := cmp.Diff(want, d.Tools); diff != "" {
		t.Errorf("Tools (-want +got):\n%s", diff)
	}
	if !d.Regressed() || d.Regressions()[Removed] != 1 {
		t.Errorf("a removed tool must be a regression: %v", d.Regressions())
	}
	added := Compare(withTools(map[string][]result.Tool{"s": {tool("a", "", "")}}), withTools(map[string][]result.Tool{"s": {tool("a", "", ""), tool("b", "", "")}}), nil)
	if added.Regressed() {
		t.Error("an added tool is not a regression")
	}
}

const obj = `{"type":"object","properties":{"text":{"type":"string","description":"what to echo"},"n":{"type":"integer","maximum":10}},"required":["text"]}`

func TestToolSchemaChanges(t *testing.T) {
	cases := []struct {
		name         string
		base, cur    result.Tool
		want         []SchemaChange
		kind         Kind
		notRegressed bool
	}{
		{"identical", tool("t", obj, ""), tool("t", obj, ""), nil, "", true},
		{"whitespace only", tool("t", obj, ""), tool("t", " "+obj+"\n", ""), nil, "", true},
		{"tool description", tool("t", obj, ""), result.Tool{Name: "t", Description: "new", InputSchema: json.RawMessage(obj)},
			[]SchemaChange{{Where: "description", Path: "(tool)", What: "description changed"}}, Compatible, true},
		{"required input property added",
			tool("t", obj, ""),
			tool("t", `{"type":"object","properties":{"text":{"type":"string","description":"what to echo"},"n":{"type":"integer","maximum":10},"lang":{"type":"string"}},"required":["text","lang"]}`, ""),
			[]SchemaChange{{Breaking: true, Where: "input", Path: "lang", What: "required property added"}}, Breaking, false},
		{"optional input property added",
			tool("t", obj, ""),
			tool("t", `{"type":"object","properties":{"text":{"type":"string","description":"what to echo"},"n":{"type":"integer","maximum":10},"lang":{"type":"string"}},"required":["text"]}`, ""),
			[]SchemaChange{{Where: "input", Path: "lang", What: "optional property added"}}, Compatible, true},
		{"input property removed",
			tool("t", obj, ""),
			tool("t", `{"type":"object","properties":{"text":{"type":"string","description":"what to echo"}},"required":["text"]}`, ""),
			[]SchemaChange{{Breaking: true, Where: "input", Path: "n", What: "property removed"}}, Breaking, false},
		{"input type changed",
			tool("t", obj, ""),
			tool("t", `{"type":"object","properties":{"text":{"type":"number","description":"what to echo"},"n":{"type":"integer","maximum":10}},"required":["text"]}`, ""),
			[]SchemaChange{{Breaking: true, Where: "input", Path: "text", What: "type changed from string to number"}}, Breaking, false},
		{"input type widened",
			tool("t", obj, ""),
			tool("t", `{"type":"object","properties":{"text":{"type":["string","null"],"description":"what to echo"},"n":{"type":"integer","maximum":10}},"required":["text"]}`, ""),
			[]SchemaChange{{Where: "input", Path: "text", What: "type widened from string to null|string"}}, Compatible, true},
		{"integer widened to number",
			tool("t", `{"type":"integer"}`, ""), tool("t", `{"type":"number"}`, ""),
			[]SchemaChange{{Where: "input", Path: "(root)", What: "type widened from integer to number"}}, Compatible, true},
		{"input enum narrowed",
			tool("t", `{"type":"object","properties":{"mode":{"enum":["a","b","c"]}}}`, ""),
			tool("t", `{"type":"object","properties":{"mode":{"enum":["a","b"]}}}`, ""),
			[]SchemaChange{{Breaking: true, Where: "input", Path: "mode", What: `enum narrowed: "c" removed`}}, Breaking, false},
		{"input enum widened",
			tool("t", `{"type":"object","properties":{"mode":{"enum":["a"]}}}`, ""),
			tool("t", `{"type":"object","properties":{"mode":{"enum":["a","z"]}}}`, ""),
			[]SchemaChange{{Where: "input", Path: "mode", What: `enum widened: "z" added`}}, Compatible, true},
		{"property description changed",
			tool("t", obj, ""),
			tool("t", `{"type":"object","properties":{"text":{"type":"string","description":"the text"},"n":{"type":"integer","maximum":10}},"required":["text"]}`, ""),
			[]SchemaChange{{Where: "input", Path: "text", What: "description changed"}}, Compatible, true},
		{"property became required",
			tool("t", obj, ""),
			tool("t", `{"type":"object","properties":{"text":{"type":"string","description":"what to echo"},"n":{"type":"integer","maximum":10}},"required":["text","n"]}`, ""),
			[]SchemaChange{{Breaking: true, Where: "input", Path: "n", What: "property became required"}}, Breaking, false},
		{"property became optional",
			tool("t", obj, ""),
			tool("t", `{"type":"object","properties":{"text":{"type":"string","description":"what to echo"},"n":{"type":"integer","maximum":10}}}`, ""),
			[]SchemaChange{{Where: "input", Path: "text", What: "property became optional"}}, Compatible, true},
		{"maximum tightened",
			tool("t", obj, ""),
			tool("t", `{"type":"object","properties":{"text":{"type":"string","description":"what to echo"},"n":{"type":"integer","maximum":5}},"required":["text"]}`, ""),
			[]SchemaChange{{Breaking: true, Where: "input", Path: "n", What: "maximum 10 → 5 tightened"}}, Breaking, false},
		{"pattern added",
			tool("t", `{"type":"string"}`, ""), tool("t", `{"type":"string","pattern":"^a"}`, ""),
			[]SchemaChange{{Breaking: true, Where: "input", Path: "(root)", What: `pattern "" → "^a"`}}, Breaking, false},
		{"additional properties rejected",
			tool("t", `{"type":"object"}`, ""), tool("t", `{"type":"object","additionalProperties":false}`, ""),
			[]SchemaChange{{Breaking: true, Where: "input", Path: "(root)", What: "additional properties are now rejected"}}, Breaking, false},
		{"nested property removed",
			tool("t", `{"type":"object","properties":{"user":{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}}}}}`, ""),
			tool("t", `{"type":"object","properties":{"user":{"type":"object","properties":{"name":{"type":"string"}}}}}`, ""),
			[]SchemaChange{{Breaking: true, Where: "input", Path: "user.age", What: "property removed"}}, Breaking, false},
		{"array item type changed",
			tool("t", `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}}}}`, ""),
			tool("t", `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"integer"}}}}`, ""),
			[]SchemaChange{{Breaking: true, Where: "input", Path: "tags[]", What: "type changed from string to integer"}}, Breaking, false},
		{"input schema gained a required property where none existed",
			tool("t", "", ""), tool("t", `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`, ""),
			[]SchemaChange{{Breaking: true, Where: "input", Path: "(root)", What: "type narrowed from any to object"}, {Breaking: true, Where: "input", Path: "q", What: "required property added"}}, Breaking, false},
		{"unanalysed keyword is reported for review",
			tool("t", `{"not":{"type":"string"}}`, ""), tool("t", `{"not":{"type":"number"}}`, ""),
			[]SchemaChange{{Where: "input", Path: "(root)", What: "not changed (not analysed; review)"}}, Compatible, true},
		{"not a JSON object",
			tool("t", `{"type":"object"}`, ""), tool("t", `[1]`, ""),
			[]SchemaChange{{Breaking: true, Where: "input", Path: "(root)", What: "schema is not a JSON object; the change cannot be classified"}}, Breaking, false},
		// Output schemas: what the client receives.
		{"output property removed",
			tool("t", "", `{"type":"object","properties":{"sum":{"type":"number"},"unit":{"type":"string"}}}`),
			tool("t", "", `{"type":"object","properties":{"sum":{"type":"number"}}}`),
			[]SchemaChange{{Breaking: true, Where: "output", Path: "unit", What: "property removed"}}, Breaking, false},
		{"output property added",
			tool("t", "", `{"type":"object","properties":{"sum":{"type":"number"}}}`),
			tool("t", "", `{"type":"object","properties":{"sum":{"type":"number"},"unit":{"type":"string"}}}`),
			[]SchemaChange{{Where: "output", Path: "unit", What: "property added"}}, Compatible, true},
		{"output no longer guaranteed",
			tool("t", "", `{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}`),
			tool("t", "", `{"type":"object","properties":{"sum":{"type":"number"}}}`),
			[]SchemaChange{{Breaking: true, Where: "output", Path: "sum", What: "property is no longer guaranteed (was required)"}}, Breaking, false},
		{"output enum widened",
			tool("t", "", `{"type":"object","properties":{"state":{"enum":["ok"]}}}`),
			tool("t", "", `{"type":"object","properties":{"state":{"enum":["ok","degraded"]}}}`),
			[]SchemaChange{{Breaking: true, Where: "output", Path: "state", What: `enum widened: "degraded" added`}}, Breaking, false},
		{"output type narrowed",
			tool("t", "", `{"type":["string","null"]}`), tool("t", "", `{"type":"string"}`),
			[]SchemaChange{{Where: "output", Path: "(root)", What: "type narrowed from null|string to string"}}, Compatible, true},
		{"output schema removed",
			tool("t", "", `{"type":"object"}`), tool("t", "", ""),
			[]SchemaChange{{Breaking: true, Where: "output", Path: "(root)", What: "output schema removed: structured content is no longer declared"}}, Breaking, false},
		{"output schema added",
			tool("t", "", ""), tool("t", "", `{"type":"object"}`),
			[]SchemaChange{{Where: "output", Path: "(root)", What: "output schema added"}}, Compatible, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Compare(withTools(map[string][]result.Tool{"s": {tc.base}}), withTools(map[string][]result.Tool{"s": {tc.cur}}), nil)
			if tc.kind == "" {
				if len(d.Tools) != 0 {
					t.Fatalf("want no tool change, got %+v", d.Tools)
				}
				return
			}
			want := []ToolChange{{Kind: tc.kind, Server: "s", Tool: "t", Changes: tc.want}}
			if diff := cmp.Diff(want, d.Tools); diff != "" {
				t.Errorf("Tools (-want +got):\n%s", diff)
			}
			if d.Regressed() == tc.notRegressed {
				t.Errorf("Regressed() = %v", d.Regressed())
			}
		})
	}
}

func TestComparePartialRuns(t *testing.T) {
	partial := &result.Run{Collections: []*result.Collection{nil, {Name: "c", Tests: []*result.Test{nil, tst("a", result.Passed)}}}}
	if d := Compare(nil, partial, nil); d.Regressed() || len(d.Tests) != 1 || d.Tests[0].Kind != Added {
		t.Errorf("Compare(nil, partial) = %+v", d)
	}
	if d := Compare(partial, nil, nil); d.Regressed() || len(d.Tests) != 1 || d.Tests[0].Kind != Removed {
		t.Errorf("Compare(partial, nil) = %+v", d)
	}
}
