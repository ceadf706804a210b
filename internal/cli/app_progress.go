package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v3"
	"golang.org/x/term"

	"github.com/mcpspec/mcpspec/detect"
)

// quietFlag is --quiet of every verb that can work for more than a few seconds.
func quietFlag() cli.Flag {
	return &cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print no progress on stderr while working (stdout is unchanged)"}
}

// This file holds how a long verb talks while it works, on stderr (stdout stays for the result):
// a line per phase or probe on plain output, one live line redrawn in place on a terminal, and
// nothing with --quiet. Nothing here ever asks the terminal anything (no colour or cursor
// queries): on a pseudo-terminal that does not answer, such a query stalls start-up for seconds
// and its bytes corrupt machine-readable output.

// isTerminal reports whether w is an interactive terminal on which a live view may redraw
// lines: a TTY whose TERM is not "dumb".
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return false
	}
	return os.Getenv("TERM") != "dumb"
}

// stderrIsTerminal reports whether the process's own stderr (not the masking writer over it) is
// an interactive terminal.
func (a *app) stderrIsTerminal() bool { return isTerminal(a.term.Stderr) }

// ANSI sequences the live views write; only ever written when stderr is a terminal.
const (
	ansiClearEOL = "\x1b[K" // erase from the cursor to the end of the line
	ansiClearEOS = "\x1b[J" // erase from the cursor to the end of the screen
	ansiReset    = "\x1b[0m"
	ansiBold     = "\x1b[1m"
	ansiFaint    = "\x1b[2m"
	ansiRed      = "\x1b[1;31m"
	ansiBlue     = "\x1b[34m"
)

// styled wraps s in an SGR style, or returns it unchanged when colour is off.
func styled(on bool, style, s string) string {
	if !on || s == "" {
		return s
	}
	return style + s + ansiReset
}

// liveLines redraws a block of lines in place on a terminal. Every line is written from column
// 0 and ends with erase-to-end-of-line, and what the previous frame had below the new one is
// erased, so a shorter frame never leaves stale characters ("6s / 8s8ss"). Its methods are safe
// for concurrent use.
type liveLines struct {
	// mu guards w and n.
	mu sync.Mutex
	w  io.Writer
	n  int // lines the last frame drew (the cursor is at the start of the line below them)
}

// draw replaces the previous frame with lines (none may contain a newline).
func (l *liveLines) draw(lines []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	if l.n > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", l.n)
	}
	for _, s := range lines {
		b.WriteString("\r")
		b.WriteString(s)
		b.WriteString(ansiClearEOL + "\n")
	}
	b.WriteString("\r" + ansiClearEOS)
	l.n = len(lines)
	_, _ = io.WriteString(l.w, b.String())
}

// erase removes the last frame, leaving the cursor where it began.
func (l *liveLines) erase() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == 0 {
		return
	}
	_, _ = fmt.Fprintf(l.w, "\x1b[%dA\r%s", l.n, ansiClearEOS)
	l.n = 0
}

// phases is what a long verb says while it works: [phases.step] announces a phase or probe.
// On plain output each step is one line; on a terminal it is one live line (with the time
// elapsed when it began) that the next step replaces and [phases.done] erases, so the verb's own report
// follows on a clean screen. A nil *phases is silent (--quiet).
type phases struct {
	verb  string
	live  *liveLines // nil: plain lines
	w     io.Writer
	start time.Time
	// mu guards last.
	mu   sync.Mutex
	last string
}

// newPhases returns the progress of verb on stderr, or nil (silent) when quiet.
func (a *app) newPhases(verb string, quiet bool) *phases {
	if quiet {
		return nil
	}
	p := &phases{verb: verb, w: a.io.Stderr, start: time.Now()}
	if a.stderrIsTerminal() {
		p.live = &liveLines{w: a.io.Stderr}
	}
	return p
}

// step announces what the verb does now, e.g. "probe 3/12: lock-order (echo, slow)".
func (p *phases) step(format string, args ...any) {
	if p == nil {
		return
	}
	msg := sanitizeLine(fmt.Sprintf(format, args...))
	p.mu.Lock()
	p.last = msg
	p.mu.Unlock()
	if p.live == nil {
		fmt.Fprintf(p.w, "%s: %s\n", p.verb, msg)
		return
	}
	el := time.Since(p.start).Truncate(100 * time.Millisecond)
	p.live.draw([]string{fmt.Sprintf("%s %s %s", styled(true, ansiBold, p.verb), styled(true, ansiFaint, "["+el.String()+"]"), msg)})
}

// detector returns p as a detector's progress callback (nil when p is).
func (p *phases) detector() detect.Progress {
	if p == nil {
		return nil
	}
	return func(step string) { p.step("%s", step) }
}

// done ends the progress: the live line is erased (plain lines stay, they are the log).
func (p *phases) done() {
	if p == nil || p.live == nil {
		return
	}
	p.live.erase()
}

// sanitizeLine keeps s on one line and drops control characters, so a name a server chose
// cannot move the cursor or end the live line early.
func sanitizeLine(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			return ' '
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return -1
		}
		return r
	}, s)
}
