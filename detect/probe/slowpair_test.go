package probe

import (
	"strings"
	"testing"
)

// TestCancellationAlongsideProgress runs the progress and cancellation rows, whose calls go out
// together, against servers that handle calls at once or one at a time, honouring the
// cancellation or not. The twin call must not hide an ignored cancellation: on a server that
// handles calls one at a time the cancelled call is answered before its twin, and each row keeps
// its own frames.
func TestCancellationAlongsideProgress(t *testing.T) {
	checks := []string{rowProgress, rowCancellation}
	for _, c := range []struct {
		name, spec string
		want       Status // of cancellation.honoured
	}{
		{"concurrent", "testserver", Pass},
		{"concurrent-ignores", "testserver --ignore-cancel", Warn},
		{"serial", "testserver --serialize", Pass},
		{"serial-ignores", "testserver --serialize --ignore-cancel", Warn},
		{"two-workers-ignores", "testserver --workers 2 --ignore-cancel", Warn},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rep := probeSpec(t, c.spec, nil, Options{Checks: checks})
			for _, era := range []string{"legacy", "stateless"} {
				p, ok := byKey(rep, rowProgress+"@"+era)
				if !ok || p.Status != Pass {
					t.Errorf("%s@%s: %s %q, want pass", rowProgress, era, p.Status, p.Message)
				}
				r, ok := byKey(rep, rowCancellation+"@"+era)
				if !ok || r.Status != c.want {
					t.Errorf("%s@%s: %s %q, want %s%s", rowCancellation, era, r.Status, r.Message, c.want, describeFailures(rep, true))
				}
				// Each row's evidence holds its own call's frames only.
				for _, ev := range p.Evidence {
					if strings.Contains(ev.Text, "mcpspec-probe-cancel-") {
						t.Errorf("%s@%s evidence holds a frame of the cancelled call: %s", rowProgress, era, ev.Text)
					}
				}
				var sawCancelled bool
				for _, ev := range r.Evidence {
					if ev.Dir != dirNote && strings.Contains(ev.Text, "mcpspec-probe-progress-") {
						t.Errorf("%s@%s evidence holds a frame of the progress call: %s", rowCancellation, era, ev.Text)
					}
					sawCancelled = sawCancelled || ev.Dir == dirSent && strings.Contains(ev.Text, "notifications/cancelled")
				}
				if !sawCancelled {
					t.Errorf("%s@%s evidence lacks the notifications/cancelled it sent: %+v", rowCancellation, era, r.Evidence)
				}
			}
		})
	}
}

// TestCancellationAlone runs the cancellation row without the progress row: the twin call is
// then its control only, and an ignored cancellation still warns.
func TestCancellationAlone(t *testing.T) {
	for _, c := range []struct {
		spec string
		want Status
	}{
		{"testserver --serialize", Pass},
		{"testserver --serialize --ignore-cancel", Warn},
	} {
		t.Run(c.spec, func(t *testing.T) {
			t.Parallel()
			rep := probeSpec(t, c.spec, nil, Options{Checks: []string{rowCancellation}})
			r, ok := byKey(rep, rowCancellation+"@legacy")
			if !ok || r.Status != c.want {
				t.Errorf("%s: %s %q, want %s", rowCancellation, r.Status, r.Message, c.want)
			}
		})
	}
}
