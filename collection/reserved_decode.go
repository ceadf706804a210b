package collection

import (
	"math"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mcpspec/mcpspec/assert"
)

// msDuration converts milliseconds.
func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// scenarios are the accepted load scenarios.
var scenarios = []string{"sustained", "spike", "ramp", "soak", "coldStart", "pattern"}

// decodeLoad reads the reserved `load:` block.
func (d *decoder) decodeLoad(n *yaml.Node) *LoadSpec {
	fs, ok := d.fields(n, "load", []string{"scenario", "duration", "concurrent", "rate", "warmup", "iterations",
		"ramp", "spike", "soak", "mix", "toolCalls", "patterns", "thresholds", "maxInFlight", "sessions", "resources", "noGate"})
	if !ok {
		return nil
	}
	l := &LoadSpec{Pos: d.pos(n), Scenario: "sustained"}
	if f, ok := fs["scenario"]; ok {
		if v, ok := d.str(f.val, "load.scenario"); ok {
			if !has(scenarios, v) {
				d.errf(f.val, suggest(v, scenarios), "load.scenario: unknown scenario %q", v)
			}
			l.Scenario = v
		}
	}
	durs := map[string]*time.Duration{"duration": &l.Duration, "warmup": &l.Warmup}
	for k, p := range durs {
		if f, ok := fs[k]; ok {
			*p, _ = d.duration(f.val, "load."+k)
		}
	}
	if f, ok := fs["concurrent"]; ok {
		v, _ := d.integer(f.val, "load.concurrent", 1, 100000)
		l.Concurrent = int(v)
	}
	if f, ok := fs["iterations"]; ok {
		v, _ := d.integer(f.val, "load.iterations", 1, 1000000)
		l.Iterations = int(v)
	}
	if f, ok := fs["rate"]; ok {
		l.Rate, _ = d.number(f.val, "load.rate", 0, 1e7)
	}
	if f, ok := fs["ramp"]; ok {
		if rfs, ok := d.fields(f.val, "load.ramp", []string{"from", "to", "duration"}); ok {
			r := &RampSpec{}
			if v, ok := rfs["from"]; ok {
				x, _ := d.integer(v.val, "load.ramp.from", 1, 100000)
				r.From = int(x)
			}
			if v, ok := rfs["to"]; ok {
				x, _ := d.integer(v.val, "load.ramp.to", 1, 100000)
				r.To = int(x)
			}
			if v, ok := rfs["duration"]; ok {
				r.Duration, _ = d.duration(v.val, "load.ramp.duration")
			}
			l.Ramp = r
		}
	}
	if f, ok := fs["spike"]; ok {
		if sfs, ok := d.fields(f.val, "load.spike", []string{"baselineConcurrent", "spikeConcurrent", "baselineDuration", "spikeAt", "spikeDuration"}); ok {
			s := &SpikeSpec{}
			for k, p := range map[string]*int{"baselineConcurrent": &s.BaselineConcurrent, "spikeConcurrent": &s.SpikeConcurrent} {
				if v, ok := sfs[k]; ok {
					x, _ := d.integer(v.val, "load.spike."+k, 1, 100000)
					*p = int(x)
				}
			}
			for k, p := range map[string]*time.Duration{"baselineDuration": &s.BaselineDuration, "spikeAt": &s.SpikeAt, "spikeDuration": &s.SpikeDuration} {
				if v, ok := sfs[k]; ok {
					*p, _ = d.duration(v.val, "load.spike."+k)
				}
			}
			l.Spike = s
		}
	}
	if f, ok := fs["soak"]; ok {
		if sfs, ok := d.fields(f.val, "load.soak", []string{"sampleInterval", "latencyDriftMsPerSec"}); ok {
			s := &SoakSpec{}
			if v, ok := sfs["sampleInterval"]; ok {
				s.SampleInterval, _ = d.duration(v.val, "load.soak.sampleInterval")
			}
			if v, ok := sfs["latencyDriftMsPerSec"]; ok {
				s.LatencyDriftMsPerSec, _ = d.number(v.val, "load.soak.latencyDriftMsPerSec", 0, 1e9)
			}
			l.Soak = s
		}
	}
	if f, ok := fs["mix"]; ok {
		l.Mix = d.decodeMix(f.val)
	}
	if f, ok := fs["toolCalls"]; ok {
		l.ToolCalls = d.decodeToolCalls(f.val)
	}
	if f, ok := fs["patterns"]; ok {
		l.Patterns = d.decodePatterns(f.val)
	}
	if f, ok := fs["thresholds"]; ok {
		l.Thresholds = d.decodeThresholds(f.val, "")
	}
	if f, ok := fs["maxInFlight"]; ok {
		v, _ := d.integer(f.val, "load.maxInFlight", 1, 1000000)
		l.MaxInFlight = int(v)
	}
	if f, ok := fs["sessions"]; ok {
		v, _ := d.integer(f.val, "load.sessions", 1, 10000)
		l.Sessions = int(v)
	}
	if f, ok := fs["resources"]; ok {
		l.Resources = d.decodeResources(f.val)
	}
	if f, ok := fs["noGate"]; ok {
		l.NoGate = d.decodeNoGate(f.val)
	}
	return l
}

// decodeNoGate reads `load.noGate: [crash, leak]`: default gates turned off, each checked
// against [LoadGates] where it stands.
func (d *decoder) decodeNoGate(n *yaml.Node) []string {
	names, ok := d.strList(n, "load.noGate")
	if !ok {
		return nil
	}
	gates := LoadGates()
	for i, name := range names {
		if !has(gates, name) {
			d.errf(n.Content[i], suggest(name, gates), "load.noGate: unknown gate %q (want crash, hang, malformed, assertions, leak or all)", name)
		}
	}
	return names
}

// decodeResources reads `load.resources: {serverPid | cgroup | metricsUrl, sampleInterval,
// leakMinCalls}`.
func (d *decoder) decodeResources(n *yaml.Node) *ResourcesSpec {
	fs, ok := d.fields(n, "load.resources", []string{"serverPid", "cgroup", "metricsUrl", "sampleInterval", "leakMinCalls"})
	if !ok {
		return nil
	}
	r := &ResourcesSpec{Pos: d.pos(n)}
	var sources []string
	if f, ok := fs["serverPid"]; ok {
		v, _ := d.integer(f.val, "load.resources.serverPid", 1, math.MaxInt32)
		r.ServerPID, sources = int(v), append(sources, "serverPid")
	}
	if f, ok := fs["cgroup"]; ok {
		r.Cgroup, _ = d.nonEmpty(f.val, "load.resources.cgroup")
		sources = append(sources, "cgroup")
	}
	if f, ok := fs["metricsUrl"]; ok {
		r.MetricsURL, _ = d.nonEmpty(f.val, "load.resources.metricsUrl")
		sources = append(sources, "metricsUrl")
	}
	if len(sources) > 1 {
		d.errf(n, "sample a process (serverPid), a cgroup (cgroup) or a /metrics endpoint (metricsUrl)",
			"load.resources: %s are exclusive, give one", strings.Join(sources, " and "))
	}
	if f, ok := fs["sampleInterval"]; ok {
		r.SampleInterval, _ = d.duration(f.val, "load.resources.sampleInterval")
	}
	if f, ok := fs["leakMinCalls"]; ok {
		if v, ok := d.integer(f.val, "load.resources.leakMinCalls", 0, 1e9); ok {
			r.LeakMinCalls = &v
		}
	}
	return r
}

// onErrors are the accepted pattern step error behaviours.
var onErrors = []string{"continue", "abort", "retry"}

// decodePatterns reads `patterns: [{name, weight, thinkTime, steps: [{tool, input, onError}]}]`.
func (d *decoder) decodePatterns(n *yaml.Node) []PatternSpec {
	if n.Kind != yaml.SequenceNode {
		d.errf(n, "", "load.patterns must be a list, got %s", kindName(n))
		return nil
	}
	var out []PatternSpec
	for _, item := range n.Content {
		fs, ok := d.fields(item, "load.patterns entry", []string{"name", "weight", "thinkTime", "steps"})
		if !ok {
			continue
		}
		p := PatternSpec{Weight: 1, Pos: d.pos(item)}
		if f, ok := fs["name"]; ok {
			p.Name, _ = d.nonEmpty(f.val, "load.patterns name")
		}
		if f, ok := fs["weight"]; ok {
			p.Weight, _ = d.number(f.val, "load.patterns weight", 0, 1e6)
		}
		if f, ok := fs["thinkTime"]; ok {
			p.ThinkTime, _ = d.duration(f.val, "load.patterns thinkTime")
		}
		f, ok := fs["steps"]
		if !ok || f.val.Kind != yaml.SequenceNode || len(f.val.Content) == 0 {
			d.errf(item, "", "load.patterns entry needs steps: a list of {tool, input, onError}")
			continue
		}
		for _, sn := range f.val.Content {
			sfs, ok := d.fields(sn, "load.patterns step", []string{"tool", "input", "onError"})
			if !ok {
				continue
			}
			st := PatternStep{Pos: d.pos(sn), Input: map[string]any{}, OnError: "continue"}
			if v, ok := sfs["tool"]; ok {
				st.Tool, _ = d.nonEmpty(v.val, "load.patterns step tool")
			} else {
				d.errf(sn, "", "load.patterns step needs a tool")
			}
			if v, ok := sfs["input"]; ok {
				st.Input, _ = d.object(v.val, "load.patterns step input")
			}
			if v, ok := sfs["onError"]; ok {
				if e, ok := d.str(v.val, "load.patterns step onError"); ok {
					if !has(onErrors, e) {
						d.errf(v.val, suggest(e, onErrors), "load.patterns step onError: unknown %q (want continue, abort or retry)", e)
					}
					st.OnError = e
				}
			}
			p.Steps = append(p.Steps, st)
		}
		out = append(out, p)
	}
	return out
}

// decodeMix reads `mix: [{test, weight}]`.
func (d *decoder) decodeMix(n *yaml.Node) []WeightedTest {
	if n.Kind != yaml.SequenceNode {
		d.errf(n, "", "load.mix must be a list, got %s", kindName(n))
		return nil
	}
	var out []WeightedTest
	for _, item := range n.Content {
		fs, ok := d.fields(item, "load.mix entry", []string{"test", "weight"})
		if !ok {
			continue
		}
		w := WeightedTest{Weight: 1, Pos: d.pos(item)}
		if f, ok := fs["test"]; ok {
			w.Test, _ = d.nonEmpty(f.val, "load.mix test")
		} else {
			d.errf(item, "", "load.mix entry needs a test id")
		}
		if f, ok := fs["weight"]; ok {
			w.Weight, _ = d.number(f.val, "load.mix weight", 0, 1e6)
		}
		out = append(out, w)
	}
	return out
}

// decodeToolCalls reads `toolCalls: [{tool, input, weight}]`.
func (d *decoder) decodeToolCalls(n *yaml.Node) []WeightedCall {
	if n.Kind != yaml.SequenceNode {
		d.errf(n, "", "load.toolCalls must be a list, got %s", kindName(n))
		return nil
	}
	var out []WeightedCall
	for _, item := range n.Content {
		fs, ok := d.fields(item, "load.toolCalls entry", []string{"tool", "input", "weight"})
		if !ok {
			continue
		}
		w := WeightedCall{Weight: 1, Pos: d.pos(item), Input: map[string]any{}}
		if f, ok := fs["tool"]; ok {
			w.Tool, _ = d.nonEmpty(f.val, "load.toolCalls tool")
		} else {
			d.errf(item, "", "load.toolCalls entry needs a tool")
		}
		if f, ok := fs["input"]; ok {
			w.Input, _ = d.object(f.val, "load.toolCalls input")
		}
		if f, ok := fs["weight"]; ok {
			w.Weight, _ = d.number(f.val, "load.toolCalls weight", 0, 1e6)
		}
		out = append(out, w)
	}
	return out
}

// runThresholdKeys are the threshold keys of the whole run; perToolThresholdKeys those a
// tool's thresholds may have too.
var (
	perToolThresholdKeys = []string{"p50", "p95", "p99", "p999", "errorRate"}
	runThresholdKeys     = []string{"hangTimeout", "memoryGrowthMb", "leakKbPerCall", "leakSlopeMbPerSec", "minRps", "tools"}
)

// decodeThresholds reads a thresholds block; tool names the tool of a thresholds.tools entry
// ("" for the run's).
func (d *decoder) decodeThresholds(n *yaml.Node, tool string) *Thresholds {
	what := "thresholds"
	if tool != "" {
		what = "thresholds.tools." + tool
	}
	fs, ok := d.fields(n, what, append(slices.Clone(perToolThresholdKeys), runThresholdKeys...))
	if !ok {
		return nil
	}
	if tool != "" {
		for _, k := range runThresholdKeys {
			if f, ok := fs[k]; ok {
				d.errf(f.key, "move it up to thresholds:, beside tools:", "%s.%s applies to the whole run, not to one tool", what, k)
			}
		}
	}
	t := &Thresholds{}
	for k, p := range map[string]*time.Duration{"p50": &t.P50, "p95": &t.P95, "p99": &t.P99, "p999": &t.P999} {
		if f, ok := fs[k]; ok {
			*p, _ = d.duration(f.val, what+"."+k)
		}
	}
	if f, ok := fs["errorRate"]; ok {
		t.ErrorRate, _ = d.number(f.val, what+".errorRate", 0, 1)
	}
	if tool != "" {
		return t
	}
	if f, ok := fs["hangTimeout"]; ok {
		t.HangTimeout, _ = d.duration(f.val, "thresholds.hangTimeout")
	}
	for k, p := range map[string]*float64{"memoryGrowthMb": &t.MemoryGrowthMB, "leakKbPerCall": &t.LeakKBPerCall,
		"leakSlopeMbPerSec": &t.LeakSlopeMBPerSec, "minRps": &t.MinRPS} {
		if f, ok := fs[k]; ok {
			*p, _ = d.number(f.val, "thresholds."+k, 0, 1e9)
		}
	}
	if f, ok := fs["tools"]; ok {
		if f.val.Kind != yaml.MappingNode {
			d.errf(f.val, "", "thresholds.tools must map tool names to thresholds, got %s", kindName(f.val))
		} else {
			t.Tools = map[string]*Thresholds{}
			for i := 0; i+1 < len(f.val.Content); i += 2 {
				if sub := d.decodeThresholds(f.val.Content[i+1], f.val.Content[i].Value); sub != nil {
					t.Tools[f.val.Content[i].Value] = sub
				}
			}
		}
	}
	return t
}

// toolTarget reads the shared tool/input/concurrent keys of deadlock and race; needTool says
// whether the tool is required. input stays nil when not given (made up from the schema).
func (d *decoder) toolTarget(fs map[string]field, n *yaml.Node, block string, needTool bool) (tool string, input map[string]any, conc int) {
	if f, ok := fs["tool"]; ok {
		tool, _ = d.nonEmpty(f.val, block+".tool")
	} else if needTool {
		d.errf(n, "", "%s needs a tool", block)
	}
	if f, ok := fs["input"]; ok {
		input, _ = d.object(f.val, block+".input")
		if input == nil {
			input = map[string]any{}
		}
	}
	if f, ok := fs["concurrent"]; ok {
		v, _ := d.integer(f.val, block+".concurrent", 1, 10000)
		conc = int(v)
	}
	return tool, input, conc
}

// decodeDeadlock reads the reserved `deadlock:` block.
func (d *decoder) decodeDeadlock(n *yaml.Node, c *Collection) *DeadlockSpec {
	fs, ok := d.fields(n, "deadlock", []string{"server", "tool", "input", "concurrent", "hangThreshold", "gracePeriod",
		"includeDestructive", "includeOpenWorld", "skipTools"})
	if !ok {
		return nil
	}
	s := &DeadlockSpec{Pos: d.pos(n), Concurrent: 20, HangThreshold: 5 * time.Second, GracePeriod: 10 * time.Second}
	var conc int
	s.Server = d.blockServer(n, fs, "deadlock", c)
	s.Tool, s.Input, conc = d.toolTarget(fs, n, "deadlock", false)
	if s.Tool == "" && s.Input != nil {
		d.errf(fs["input"].val, "name the tool the input is for, or drop input to probe every tool", "deadlock.input without deadlock.tool")
	}
	if f, ok := fs["includeDestructive"]; ok {
		s.IncludeDestructive, _ = d.boolean(f.val, "deadlock.includeDestructive")
	}
	if f, ok := fs["includeOpenWorld"]; ok {
		s.IncludeOpenWorld, _ = d.boolean(f.val, "deadlock.includeOpenWorld")
	}
	if f, ok := fs["skipTools"]; ok {
		s.SkipTools, _ = d.strList(f.val, "deadlock.skipTools")
	}
	if conc > 0 {
		s.Concurrent = conc
	}
	if f, ok := fs["hangThreshold"]; ok {
		s.HangThreshold, _ = d.duration(f.val, "deadlock.hangThreshold")
	}
	if f, ok := fs["gracePeriod"]; ok {
		s.GracePeriod, _ = d.duration(f.val, "deadlock.gracePeriod")
	}
	for k, v := range map[string]time.Duration{"hangThreshold": s.HangThreshold, "gracePeriod": s.GracePeriod} {
		if f, ok := fs[k]; ok && v <= 0 {
			d.errf(f.val, "e.g. 5s", "deadlock.%s must be positive", k)
		}
	}
	return s
}

// decodeRace reads the reserved `race:` block.
func (d *decoder) decodeRace(n *yaml.Node, c *Collection) *RaceSpec {
	fs, ok := d.fields(n, "race", []string{"server", "tool", "input", "concurrent", "rounds", "ignore"})
	if !ok {
		return nil
	}
	s := &RaceSpec{Pos: d.pos(n), Concurrent: 10, Rounds: 3}
	var conc int
	s.Server = d.blockServer(n, fs, "race", c)
	s.Tool, s.Input, conc = d.toolTarget(fs, n, "race", true)
	if conc > 0 {
		s.Concurrent = conc
	}
	if f, ok := fs["rounds"]; ok {
		v, _ := d.integer(f.val, "race.rounds", 1, 100)
		s.Rounds = int(v)
	}
	if f, ok := fs["ignore"]; ok {
		s.Ignore, _ = d.strList(f.val, "race.ignore")
		for _, p := range s.Ignore {
			if _, err := assert.CompilePath(p); err != nil {
				d.errf(f.val, "e.g. $.structuredContent.time or $..timestamp", "race.ignore: %v", err)
			}
		}
	}
	return s
}

// decodeHeadOfLine reads the `head-of-line:` block.
func (d *decoder) decodeHeadOfLine(n *yaml.Node, c *Collection) *HeadOfLineSpec {
	const block = "head-of-line"
	fs, ok := d.fields(n, block, []string{"server", "slowTool", "slowInput", "fastTool", "fastInput", "slowConcurrent", "rounds", "samples", "threshold"})
	if !ok {
		return nil
	}
	s := &HeadOfLineSpec{Pos: d.pos(n), SlowConcurrent: 4, Rounds: 5, Samples: 10, Threshold: 5}
	s.Server = d.blockServer(n, fs, block, c)
	for _, t := range []struct {
		key  string
		dst  *string
		in   string
		args *map[string]any
	}{{"slowTool", &s.SlowTool, "slowInput", &s.SlowInput}, {"fastTool", &s.FastTool, "fastInput", &s.FastInput}} {
		if f, ok := fs[t.key]; ok {
			*t.dst, _ = d.nonEmpty(f.val, block+"."+t.key)
		} else {
			d.errf(n, "", "%s needs a %s", block, t.key)
		}
		if f, ok := fs[t.in]; ok {
			*t.args, _ = d.object(f.val, block+"."+t.in)
			if *t.args == nil {
				*t.args = map[string]any{}
			}
		}
	}
	for _, x := range []struct {
		key    string
		dst    *int
		lo, hi int64
	}{{"slowConcurrent", &s.SlowConcurrent, 1, 100}, {"rounds", &s.Rounds, 1, 100}, {"samples", &s.Samples, 1, 1000}} {
		if f, ok := fs[x.key]; ok {
			v, _ := d.integer(f.val, block+"."+x.key, x.lo, x.hi)
			*x.dst = int(v)
		}
	}
	if f, ok := fs["threshold"]; ok {
		s.Threshold, _ = d.number(f.val, block+".threshold", 1.5, 1e6)
	}
	return s
}

// decodeProbe reads the reserved `probe:` block.
func (d *decoder) decodeProbe(n *yaml.Node) *ProbeSpec {
	fs, ok := d.fields(n, "probe", []string{"checks", "timeout", "server", "strict", "slowTool", "slowInput"})
	if !ok {
		return nil
	}
	s := &ProbeSpec{Pos: d.pos(n)}
	if f, ok := fs["checks"]; ok {
		s.Checks, _ = d.strList(f.val, "probe.checks")
	}
	if f, ok := fs["timeout"]; ok {
		s.Timeout, _ = d.duration(f.val, "probe.timeout")
	}
	if f, ok := fs["server"]; ok {
		s.Server, _ = d.nonEmpty(f.val, "probe.server")
	}
	if f, ok := fs["strict"]; ok {
		s.Strict, _ = d.boolean(f.val, "probe.strict")
	}
	if f, ok := fs["slowTool"]; ok {
		s.SlowTool, _ = d.nonEmpty(f.val, "probe.slowTool")
	}
	if f, ok := fs["slowInput"]; ok {
		s.SlowInput, _ = d.object(f.val, "probe.slowInput")
	}
	return s
}
