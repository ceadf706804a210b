package cli

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/loadgen"
)

// screen replays what liveLines writes on a tiny terminal model that understands only what
// liveLines uses (CR, LF, cursor up, erase to end of line, erase to end of screen) and returns
// the visible lines.
func screen(t *testing.T, out string) []string {
	t.Helper()
	var rows [][]rune
	row, col := 0, 0
	put := func(r rune) {
		for len(rows) <= row {
			rows = append(rows, nil)
		}
		for len(rows[row]) <= col {
			rows[row] = append(rows[row], ' ')
		}
		rows[row][col] = r
		col++
	}
	csi := regexp.MustCompile(`^\x1b\[(\d*)([AKJm]|;\d+m|\d*;?\d*m)`)
	for i := 0; i < len(out); {
		if m := csi.FindStringSubmatch(out[i:]); m != nil {
			switch {
			case m[2] == "A":
				n := 1
				if m[1] != "" {
					n = int(m[1][0] - '0')
					for _, d := range m[1][1:] {
						n = n*10 + int(d-'0')
					}
				}
				row = max(0, row-n)
			case m[2] == "K":
				if row < len(rows) && col < len(rows[row]) {
					rows[row] = rows[row][:col]
				}
			case m[2] == "J":
				if row < len(rows) {
					if col < len(rows[row]) {
						rows[row] = rows[row][:col]
					}
					rows = rows[:row+1]
				}
			}
			i += len(m[0])
			continue
		}
		if out[i] == 0x1b {
			t.Fatalf("unexpected escape sequence at %q", out[i:])
		}
		r := []rune(out[i:])[0]
		switch r {
		case '\r':
			col = 0
		case '\n':
			row, col = row+1, 0
		default:
			put(r)
		}
		i += len(string(r))
	}
	var lines []string
	for _, r := range rows {
		lines = append(lines, string(r))
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// TestLiveLinesLeaveNoStaleCharacters redraws a longer frame with a shorter one: before the fix
// (bubbletea's renderer under tmux) "6s / 8s" over "10s / 8s" left "6s / 8s8ss".
func TestLiveLinesLeaveNoStaleCharacters(t *testing.T) {
	var b bytes.Buffer
	l := &liveLines{w: &b}
	l.draw([]string{"title · stage one", "bar 10.5s / 18s", "third line"})
	l.draw([]string{"title", "bar 6s / 8s"})
	want := []string{"title", "bar 6s / 8s"}
	if diff := cmp.Diff(want, screen(t, b.String())); diff != "" {
		t.Errorf("screen after redraw (-want +got):\n%s\nbytes: %q", diff, b.String())
	}
	for _, line := range strings.SplitAfter(b.String(), "\n") {
		if strings.HasSuffix(line, "\n") && !strings.HasSuffix(line, ansiClearEOL+"\n") {
			t.Errorf("line %q does not clear to the end of the line", line)
		}
	}
	l.erase()
	if got := screen(t, b.String()); len(got) != 0 {
		t.Errorf("after erase the screen holds %q", got)
	}
}

// TestLiveProgressPanel draws two load progress frames and checks what the terminal shows.
func TestLiveProgressPanel(t *testing.T) {
	var b bytes.Buffer
	lp := newLiveProgress(&b, &loadgen.Config{Scenario: "constant"})
	lp.update(loadgen.Progress{Elapsed: 10500 * time.Millisecond, Total: 18 * time.Second, Stage: "stage 2/3"})
	lp.last = time.Time{} // let the next frame through the redraw throttle
	lp.update(loadgen.Progress{Elapsed: 6 * time.Second, Total: 8 * time.Second})
	got := screen(t, b.String())
	if len(got) != 3 || got[0] != "mcpspec load · constant" || !strings.HasSuffix(got[1], " 6s / 8s") {
		t.Errorf("screen = %q, want the title without the old stage and a bar ending in \" 6s / 8s\"", got)
	}
}

// TestProgressTTYDetection: the masking writer over stderr is never a terminal, so the live
// view must be chosen from the process's own stderr. Before the fix --progress auto asked the
// masking writer and printed plain lines in tmux.
func TestProgressTTYDetection(t *testing.T) {
	var out bytes.Buffer
	a := newApp(&IO{Stdout: &out, Stderr: &out})
	if _, ok := a.newProgress("auto", &loadgen.Config{}).(*plainProgress); !ok {
		t.Errorf("auto on a buffer: want plain lines")
	}
	if _, ok := a.newProgress("tty", &loadgen.Config{}).(*liveProgress); !ok {
		t.Errorf("tty: want the live view")
	}
	if _, ok := a.newProgress("off", &loadgen.Config{}).(noProgress); !ok {
		t.Errorf("off: want nothing")
	}
}

func TestPhasesPlainAndQuiet(t *testing.T) {
	var out bytes.Buffer
	a := newApp(&IO{Stdout: &out, Stderr: &out})
	p := a.newPhases("deadlock", false)
	p.step("probe %d/%d: %s", 1, 2, "echo\x1b[2J")
	p.done()
	a.flush()
	if got, want := out.String(), "deadlock: probe 1/2: echo[2J\n"; got != want {
		t.Errorf("plain progress = %q, want %q", got, want)
	}
	out.Reset()
	q := a.newPhases("deadlock", true)
	q.step("x")
	q.done()
	a.flush()
	if out.Len() != 0 {
		t.Errorf("--quiet progress wrote %q", out.String())
	}
}
