package mcptest

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"
)

// Delay slows every tools/call answer by a duration drawn from a distribution: Fixed, plus a
// uniform draw from [0, Uniform), plus an exponential draw of mean ExpMean. Draws are
// reproducible from Options.Seed and the call's number. The zero value adds nothing.
type Delay struct {
	Fixed   time.Duration
	Uniform time.Duration
	ExpMean time.Duration
}

// Draw returns the delay of call n (counting from 1).
func (d Delay) Draw(seed string, n int64) time.Duration {
	v := d.Fixed
	if d.Uniform > 0 {
		v += time.Duration(FlakyRoll(seed+"/delay-uniform", n) * float64(d.Uniform))
	}
	if d.ExpMean > 0 {
		u := FlakyRoll(seed+"/delay-exp", n)
		v += time.Duration(-math.Log(1-u) * float64(d.ExpMean))
	}
	return v
}

func (d Delay) zero() bool { return d == Delay{} }

// Stall stops answering tools/call for For, After the server's first tools/call, and again
// every Every (0: once): a call handled during a stall is answered when the stall ends. It is
// how a load test shows coordinated omission — a closed-model client stalls with the server and
// stops sending, an open-model one keeps sending and sees the wait.
type Stall struct {
	After, For, Every time.Duration
}

// until returns when the stall that covers t (an offset from the first call) ends, and false
// when t is outside every stall.
func (s Stall) until(t time.Duration) (time.Duration, bool) {
	if s.For <= 0 || t < s.After {
		return 0, false
	}
	start := s.After
	if s.Every > 0 {
		k := (t - s.After) / s.Every
		start = s.After + k*s.Every
	}
	if t < start+s.For {
		return start + s.For, true
	}
	return 0, false
}

func (s Stall) validate() error {
	if s.After < 0 || s.For < 0 || s.Every < 0 {
		return fmt.Errorf("mcptest: negative stall setting")
	}
	if s.Every > 0 && s.Every < s.For {
		return fmt.Errorf("mcptest: stalls every %s cannot last %s", s.Every, s.For)
	}
	return nil
}

// clock is when the server's first tools/call came, the origin of stall windows.
type clock struct {
	once  sync.Once
	first time.Time
}

func (c *clock) since() time.Duration {
	c.once.Do(func() { c.first = time.Now() })
	return time.Since(c.first)
}

// slowDown applies Delay and Stall to call n; it reports false when the call's context or the
// server ended first.
func (f *faultHandler) slowDown(ctx context.Context, n int64) bool {
	o := &f.b.opts
	if o.Stall.For > 0 {
		if end, ok := o.Stall.until(f.b.stallClock.since()); ok {
			if !f.sleep(ctx, end-f.b.stallClock.since()) {
				return false
			}
		}
	}
	if !o.Delay.zero() {
		if d := o.Delay.Draw(o.Seed, n); d > 0 && !f.sleep(ctx, d) {
			return false
		}
	}
	return true
}
