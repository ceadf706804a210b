package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/mcpspec/mcpspec/loadgen"
)

// progressDisplay shows a running load test.
type progressDisplay interface {
	update(p loadgen.Progress)
	stop()
}

// newProgress picks the display: a live panel on a terminal, periodic plain lines otherwise
// (CI logs), or none. It writes to stderr (masked): stdout is for the result. Whether stderr is
// a terminal is asked of the process's own stderr, not of the masking writer over it.
func (a *app) newProgress(mode string, cfg *loadgen.Config) progressDisplay {
	if mode == "off" {
		return noProgress{}
	}
	if mode == "json" {
		return &jsonProgress{w: a.io.Stderr}
	}
	if mode == "tty" || (mode == "auto" && a.stderrIsTerminal()) {
		return newLiveProgress(a.io.Stderr, cfg)
	}
	every := 5 * time.Second
	if d := cfg.Duration; d > 0 && d < 50*time.Second {
		every = max(time.Second, d/10)
	}
	return &plainProgress{w: a.io.Stderr, every: every}
}

type noProgress struct{}

func (noProgress) update(loadgen.Progress) {}
func (noProgress) stop()                   {}

// jsonProgress prints every progress report as one line of JSON (for a program watching the
// run: mcpspec ui draws its charts from them). Durations are in milliseconds.
type jsonProgress struct{ w io.Writer }

// progressJSON is one line of --progress json.
type progressJSON struct {
	ElapsedMS float64 `json:"elapsedMs"`
	TotalMS   float64 `json:"totalMs,omitempty"`
	Stage     string  `json:"stage,omitempty"`
	Requests  int64   `json:"requests"`
	Errors    int64   `json:"errors"`
	RPS       float64 `json:"rps"`
	P50MS     float64 `json:"p50Ms"`
	P99MS     float64 `json:"p99Ms"`
	InFlight  int64   `json:"inFlight"`
	RSSMB     float64 `json:"rssMb,omitempty"`
}

func (p *jsonProgress) update(pr loadgen.Progress) {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b, err := json.Marshal(progressJSON{ElapsedMS: ms(pr.Elapsed), TotalMS: ms(pr.Total), Stage: pr.Stage,
		Requests: pr.Live.Requests, Errors: pr.Live.Errors, RPS: pr.Live.RPS,
		P50MS: ms(pr.Live.RecentP50), P99MS: ms(pr.Live.RecentP99), InFlight: pr.InFlight, RSSMB: pr.RSSMB})
	if err == nil {
		fmt.Fprintf(p.w, "%s\n", b)
	}
}

func (p *jsonProgress) stop() {}

// plainProgress prints one line every few seconds.
type plainProgress struct {
	w     io.Writer
	every time.Duration
	last  time.Duration
}

func (p *plainProgress) update(pr loadgen.Progress) {
	if pr.Elapsed-p.last < p.every {
		return
	}
	p.last = pr.Elapsed
	fmt.Fprintln(p.w, progressLine(pr))
}

func (p *plainProgress) stop() {}

// progressLine is the one-line form of a progress report.
func progressLine(p loadgen.Progress) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s", p.Elapsed.Truncate(100*time.Millisecond))
	if p.Total > 0 {
		fmt.Fprintf(&b, "/%s", p.Total)
	}
	b.WriteString("]")
	if p.Stage != "" {
		fmt.Fprintf(&b, " %s", p.Stage)
	}
	l := p.Live
	fmt.Fprintf(&b, " %d requests, %.0f/s, p50 %s, p99 %s, errors %d, in flight %d", l.Requests, l.RPS, durText(l.RecentP50), durText(l.RecentP99), l.Errors, p.InFlight)
	if p.RSSMB > 0 {
		fmt.Fprintf(&b, ", server RSS %.1f MB", p.RSSMB)
	}
	if p.CapHits > 0 {
		fmt.Fprintf(&b, ", in-flight cap hit %d×", p.CapHits)
	}
	return b.String()
}

func durText(d time.Duration) string {
	switch {
	case d == 0:
		return "-"
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
	return d.Truncate(100 * time.Millisecond).String()
}

// liveProgress redraws a small panel on a terminal at most every liveEvery (the engine reports
// about twice a second). It never queries the terminal.
type liveProgress struct {
	title string
	lines liveLines
	// mu guards last and drawn.
	mu    sync.Mutex
	last  time.Time
	drawn bool
}

// liveEvery is the shortest time between two redraws of the live panel.
const liveEvery = 100 * time.Millisecond

func newLiveProgress(w io.Writer, cfg *loadgen.Config) *liveProgress {
	return &liveProgress{title: fmt.Sprintf("mcpspec load · %s", cfg.Scenario), lines: liveLines{w: w}}
}

func (l *liveProgress) update(p loadgen.Progress) {
	l.mu.Lock()
	now := time.Now()
	if l.drawn && now.Sub(l.last) < liveEvery {
		l.mu.Unlock()
		return
	}
	l.last, l.drawn = now, true
	l.mu.Unlock()
	l.lines.draw(liveView(l.title, p))
}

// stop leaves the last frame on screen: it is the run's last live figures.
func (l *liveProgress) stop() {}

// liveView renders the live panel's lines.
func liveView(title string, p loadgen.Progress) []string {
	var b strings.Builder
	b.WriteString(styled(true, ansiBold, title))
	if p.Stage != "" {
		b.WriteString(styled(true, ansiFaint, " · "+sanitizeLine(p.Stage)))
	}
	head := b.String()
	b.Reset()
	frac := 0.0
	if p.Total > 0 {
		frac = min(1, float64(p.Elapsed)/float64(p.Total))
	}
	const width = 30
	filled := int(frac * width)
	b.WriteString(styled(true, ansiBlue, strings.Repeat("█", filled)) + styled(true, ansiFaint, strings.Repeat("░", width-filled)))
	fmt.Fprintf(&b, " %s", p.Elapsed.Truncate(100*time.Millisecond))
	if p.Total > 0 {
		fmt.Fprintf(&b, " / %s", p.Total)
	}
	bar := b.String()
	b.Reset()
	l := p.Live
	errs := fmt.Sprintf("%d errors", l.Errors)
	if l.Errors > 0 {
		errs = styled(true, ansiRed, errs)
	}
	fmt.Fprintf(&b, "%d requests · %.0f/s %s · p50 %s · p99 %s · %s · %d in flight", l.Requests, l.RPS, sparkText(l.Sparkline),
		durText(l.RecentP50), durText(l.RecentP99), errs, p.InFlight)
	if p.RSSMB > 0 {
		fmt.Fprintf(&b, " · server RSS %.1f MB", p.RSSMB)
	}
	if p.CapHits > 0 {
		b.WriteString(styled(true, ansiRed, fmt.Sprintf(" · in-flight cap hit %d×", p.CapHits)))
	}
	return []string{head, bar, b.String()}
}

// sparkText draws values as block characters.
func sparkText(ys []float64) string {
	const ticks = "▁▂▃▄▅▆▇█"
	rs := []rune(ticks)
	m := 0.0
	for _, y := range ys {
		m = max(m, y)
	}
	var b strings.Builder
	for _, y := range ys {
		i := 0
		if m > 0 {
			i = int(y / m * float64(len(rs)-1))
		}
		b.WriteRune(rs[i])
	}
	return b.String()
}
