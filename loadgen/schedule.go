package loadgen

import (
	"fmt"
	"math"
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

// plan is what a run will do, worked out and checked before it starts; it does not change
// while the run goes.
type plan struct {
	cfg *resolved
	ops opTable
	// steps is the op index of each workload entry's steps; phaseOps the cold start's phases.
	steps     [][]int32
	phaseOps  map[string]int32
	sessionOp int32 // the per-iteration session's op, or -1

	legs   []leg
	stages []metrics.StageSpec
	// total is the scheduled length (0: bounded by iterations only); bound is when sending
	// stops at the latest (total, or MaxDuration).
	total, bound time.Duration
	// pacer is the open model's arrival schedule, workers the closed model's worker schedule.
	pacer   pacer.Pacer
	workers pacer.Workers
}

// newPlan resolves the scenario's schedule and the workload's operations. A schedule the
// pacers cannot follow is an [ErrConfig] error, never silently another schedule.
func newPlan(cfg *resolved) (*plan, error) {
	p := &plan{cfg: cfg, phaseOps: map[string]int32{}, sessionOp: -1}
	p.buildOps()
	legs, err := scheduleLegs(cfg)
	if err != nil {
		return nil, err
	}
	p.legs = legs
	for _, l := range legs {
		p.total += l.d
		p.stages = append(p.stages, metrics.StageSpec{Name: l.name, DurationSecs: l.d.Seconds(), Target: l.level})
	}
	if len(legs) == 0 {
		p.total = cfg.Duration
	}
	p.bound = p.total
	if p.bound <= 0 {
		p.bound = cfg.MaxDuration
	}
	if len(legs) == 0 {
		p.pacer = pacer.Constant{PerSecond: cfg.Rate, Duration: p.bound}
		p.workers = pacer.Workers{Start: cfg.Concurrency, Duration: p.bound}
		return p, nil
	}
	start, st := stagesOf(legs)
	p.workers = pacer.Workers{Start: int(start), Stages: st}
	if cfg.open {
		sp, err := pacer.NewStages(start, st)
		if err != nil {
			return nil, configErr("%s: %v", cfg.Scenario, err)
		}
		p.pacer = sp
	}
	return p, nil
}

// buildOps assigns the operation indexes of the workload's steps and the scenario's phases.
func (p *plan) buildOps() {
	cfg := p.cfg
	if cfg.Scenario == ColdStart {
		for _, ph := range []string{"connect", "handshake", "first_call", "total"} {
			p.phaseOps[ph] = p.ops.index(metrics.Op{Name: ph, Kind: metrics.KindPhase})
		}
	}
	if cfg.SessionMode == PerIteration && cfg.Scenario != ColdStart {
		p.sessionOp = p.ops.index(metrics.Op{Name: "open", Kind: metrics.KindSession})
	}
	if cfg.Workload == nil {
		return
	}
	for _, en := range cfg.Workload.Entries {
		idx := make([]int32, len(en.Steps))
		for j, st := range en.Steps {
			idx[j] = p.ops.index(metrics.Op{Name: st.Name, Kind: st.Kind})
		}
		p.steps = append(p.steps, idx)
	}
}

// scheduleLegs resolves a spike or a ramp into legs (none for the other scenarios) and checks
// them: every leg after the first starts with a jump of [jump] and so must last longer than
// it, and every level must be a finite, non-negative rate or number of workers.
func scheduleLegs(c *resolved) ([]leg, error) {
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
		if per <= jump {
			return nil, configErr("ramp: %d steps over %v last %v each, want more than %v (fewer steps or a longer duration)", steps, c.Duration, per, jump)
		}
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
	unit := "rate"
	if !c.open {
		unit = "number of workers"
	}
	for i, l := range legs {
		if l.d <= 0 || (i > 0 && l.d <= jump) {
			return nil, configErr("%s: stage %q lasts %v, want more than %v (check the %s's timings against the duration %v)", c.Scenario, l.name, l.d, jump, c.Scenario, c.Duration)
		}
		if l.level < 0 || math.IsNaN(l.level) || math.IsInf(l.level, 0) {
			return nil, configErr("%s: stage %q has %s %g, want a finite number ≥ 0", c.Scenario, l.name, unit, l.level)
		}
		if !c.open && l.level > MaxWorkers {
			return nil, configErr("%s: stage %q has %g workers, more than the %d one process can run (use the open model, --rate, for more load)", c.Scenario, l.name, l.level, MaxWorkers)
		}
	}
	return legs, nil
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

// legAt returns the leg at elapsed (nil outside the legs).
func (p *plan) legAt(elapsed time.Duration) *leg {
	var t time.Duration
	for i := range p.legs {
		t += p.legs[i].d
		if elapsed < t {
			return &p.legs[i]
		}
	}
	return nil
}

// scenarioMeta is the resolved scenario for metrics.json.
func (p *plan) scenarioMeta() metrics.Scenario {
	c := p.cfg
	s := metrics.Scenario{
		Kind: c.Scenario, Model: "closed", DurationSecs: p.total.Seconds(), Iterations: c.Iterations,
		SessionMode: string(c.SessionMode), WarmupSecs: c.Warmup.Seconds(), Seed: c.Seed, Stages: p.stages,
	}
	if c.SessionMode == Pooled {
		s.Sessions = c.Sessions
	}
	if c.open {
		s.Model, s.Rate, s.MaxInFlight = "open", c.Rate, c.MaxInFlight
	} else {
		s.Concurrent = c.Concurrency
		for _, l := range p.legs {
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

// describe says in one line what the run does.
func (p *plan) describe() string {
	c := p.cfg
	model := "closed model, " + workers(c.Concurrency)
	if c.open {
		model = fmt.Sprintf("open model, %g/s, at most %d in flight", c.Rate, c.MaxInFlight)
	}
	return fmt.Sprintf("%s, %s, sessions %s", c.Scenario, model, c.SessionMode)
}
