package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"golang.org/x/term"

	"github.com/mcpspec/mcpspec/loadgen"
)

// progressDisplay shows a running load test.
type progressDisplay interface {
	update(p loadgen.Progress)
	stop()
}

// newProgress picks the display: a live one (bubbletea) on a terminal, periodic plain lines
// otherwise (CI logs), or none. It writes to stderr: stdout is for the result.
func (a *app) newProgress(mode string, cfg *loadgen.Config) progressDisplay {
	if mode == "off" {
		return noProgress{}
	}
	tty := false
	if f, ok := a.io.Stderr.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	if mode == "tty" || (mode == "auto" && tty) {
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

// liveProgress is a bubbletea program redrawing a small panel about twice a second.
type liveProgress struct {
	p    *tea.Program
	done chan struct{}
	once sync.Once
}

type quitMsg struct{}

func newLiveProgress(w io.Writer, cfg *loadgen.Config) *liveProgress {
	m := liveModel{title: fmt.Sprintf("mcpspec load · %s", cfg.Scenario)}
	lp := &liveProgress{done: make(chan struct{})}
	lp.p = tea.NewProgram(m, tea.WithOutput(w), tea.WithInput(nil), tea.WithoutSignalHandler(), tea.WithFPS(10))
	go func() {
		defer close(lp.done)
		_, _ = lp.p.Run()
	}()
	return lp
}

func (l *liveProgress) update(p loadgen.Progress) { l.p.Send(p) }

func (l *liveProgress) stop() {
	l.once.Do(func() {
		l.p.Send(quitMsg{})
		select {
		case <-l.done:
		case <-time.After(2 * time.Second):
			l.p.Kill()
			<-l.done
		}
	})
}

type liveModel struct {
	title string
	p     loadgen.Progress
}

func (m liveModel) Init() tea.Cmd { return nil }

func (m liveModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case loadgen.Progress:
		m.p = msg
	case quitMsg:
		return m, tea.Quit
	}
	return m, nil
}

var (
	titleStyle = lipgloss.NewStyle().Bold(true)
	dimStyle   = lipgloss.NewStyle().Faint(true)
	errStyle   = lipgloss.NewStyle().Foreground(lipgloss.Color("1")).Bold(true)
	barStyle   = lipgloss.NewStyle().Foreground(lipgloss.Color("4"))
)

func (m liveModel) View() string {
	p := m.p
	var b strings.Builder
	b.WriteString(titleStyle.Render(m.title))
	if p.Stage != "" {
		b.WriteString(dimStyle.Render(" · " + p.Stage))
	}
	b.WriteString("\n")
	frac := 0.0
	if p.Total > 0 {
		frac = min(1, float64(p.Elapsed)/float64(p.Total))
	}
	const width = 30
	filled := int(frac * width)
	b.WriteString(barStyle.Render(strings.Repeat("█", filled)) + dimStyle.Render(strings.Repeat("░", width-filled)))
	fmt.Fprintf(&b, " %s", p.Elapsed.Truncate(100*time.Millisecond))
	if p.Total > 0 {
		fmt.Fprintf(&b, " / %s", p.Total)
	}
	b.WriteString("\n")
	l := p.Live
	errs := fmt.Sprintf("%d errors", l.Errors)
	if l.Errors > 0 {
		errs = errStyle.Render(errs)
	}
	fmt.Fprintf(&b, "%d requests · %.0f/s %s · p50 %s · p99 %s · %s · %d in flight", l.Requests, l.RPS, sparkText(l.Sparkline),
		durText(l.RecentP50), durText(l.RecentP99), errs, p.InFlight)
	if p.RSSMB > 0 {
		fmt.Fprintf(&b, " · server RSS %.1f MB", p.RSSMB)
	}
	if p.CapHits > 0 {
		b.WriteString(errStyle.Render(fmt.Sprintf(" · in-flight cap hit %d×", p.CapHits)))
	}
	b.WriteString("\n")
	return b.String()
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
