package loadgen

import (
	"fmt"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/loadgen/pacer"
)

// jump is the length of the ramp that stands for a step change in a schedule.
const jump = time.Millisecond

// leg is one named part of a scenario's schedule at one level (rate or workers).
type leg struct {
	name  string
	d     time.Duration
	level float64
}

// schedule resolves the scenario into legs: their total length, the metrics' stage specs.
func (e *engine) schedule() {
	c := e.cfg
	base := c.Rate
	if !c.open {
		base = float64(c.Concurrency)
	}
	var legs []leg
	switch c.Scenario {
	case Spike:
		peak := c.Spike.Peak
		if peak <= 0 {
			peak = 10 * base
		}
		at, dur := c.Spike.At, c.Spike.For
		if at <= 0 {
			at = c.Duration / 3
		}
		if dur <= 0 {
			dur = c.Duration / 6
		}
		rest := c.Duration - at - dur
		if rest <= 0 {
			rest = dur
		}
		legs = []leg{{"baseline", at, base}, {"spike", dur, peak}, {"recovery", rest, base}}
	case Ramp:
		to := c.Ramp.To
		if to <= 0 {
			to = 10 * base
		}
		steps := c.Ramp.Steps
		if steps <= 0 {
			steps = 5
		}
		per := c.Duration / time.Duration(steps)
		for k := range steps {
			lv := base
			if steps > 1 {
				lv = base + (to-base)*float64(k)/float64(steps-1)
			}
			if !c.open {
				lv = float64(int(lv + 0.5))
			}
			legs = append(legs, leg{fmt.Sprintf("step %d", k+1), per, lv})
		}
	}
	if len(legs) == 0 {
		e.total = c.Duration
		return
	}
	for _, l := range legs {
		e.total += l.d
		e.runStages = append(e.runStages, metrics.StageSpec{Name: l.name, DurationSecs: l.d.Seconds(), Target: l.level})
	}
	e.legs = legs
}

// stagesOf turns legs into a pacer schedule: each leg jumps to its level, then holds it.
func stagesOf(legs []leg) (start float64, st []pacer.Stage) {
	start = legs[0].level
	for i, l := range legs {
		if i == 0 {
			st = append(st, pacer.Stage{Duration: l.d, Target: l.level})
			continue
		}
		st = append(st, pacer.Stage{Duration: jump, Target: l.level}, pacer.Stage{Duration: l.d - jump, Target: l.level})
	}
	return start, st
}

// pacer returns the open model's schedule.
func (e *engine) pacer() pacer.Pacer {
	c := e.cfg
	if len(e.legs) > 0 {
		start, st := stagesOf(e.legs)
		p, err := pacer.NewStages(start, st)
		if err == nil {
			return p
		}
	}
	d := e.total
	if d <= 0 {
		d = c.MaxDuration
	}
	return pacer.Constant{PerSecond: c.Rate, Duration: d}
}

// workerSchedule returns the closed model's schedule.
func (e *engine) workerSchedule() pacer.Workers {
	c := e.cfg
	if len(e.legs) > 0 {
		start, st := stagesOf(e.legs)
		return pacer.Workers{Start: int(start), Stages: st}
	}
	d := e.total
	if d <= 0 {
		d = c.MaxDuration
	}
	return pacer.Workers{Start: c.Concurrency, Duration: d}
}

// legAt names the leg at elapsed.
func (e *engine) legAt(elapsed time.Duration) string {
	var t time.Duration
	for _, l := range e.legs {
		t += l.d
		if elapsed < t {
			return l.name
		}
	}
	return ""
}

// scenarioMeta is the resolved scenario for metrics.json.
func (e *engine) scenarioMeta() metrics.Scenario {
	c := e.cfg
	s := metrics.Scenario{
		Kind: c.Scenario, Model: "closed", DurationSecs: e.total.Seconds(), Iterations: c.Iterations,
		SessionMode: string(c.SessionMode), WarmupSecs: c.Warmup.Seconds(), Seed: c.Seed, Stages: e.runStages,
	}
	if c.SessionMode == Pooled {
		s.Sessions = c.Sessions
	}
	if c.open {
		s.Model, s.Rate, s.MaxInFlight = "open", c.Rate, c.MaxInFlight
	} else {
		s.Concurrent = c.Concurrency
		for _, l := range e.legs {
			s.Concurrent = max(s.Concurrent, int(l.level))
		}
	}
	if c.Workload != nil {
		for _, en := range c.Workload.Entries {
			kind := metrics.KindTool
			if len(en.Steps) > 1 {
				kind = "pattern"
			} else if len(en.Steps) == 1 {
				kind = en.Steps[0].Kind
			}
			s.Workload = append(s.Workload, metrics.WorkloadEntry{Name: en.String(), Kind: kind, Weight: en.Weight})
		}
	}
	return s
}
