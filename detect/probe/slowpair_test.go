package probe

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

// TestCancellationAlongsideProgress runs the progress and cancellation rows, whose calls go out
// together, against servers that handle calls at once or one at a time, honouring the
// cancellation or not. The twin call must not hide an ignored cancellation: on a server that
// handles calls one at a time the cancelled call is answered before its twin, and each row keeps
// its own frames.
func TestCancellationAlongsideProgress(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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

// TestErasSideBySideKeepEvidenceApart probes both eras of a stdio server, which run at the same
// time: each row's evidence holds frames of its own era only (the handshake era never sends
// the stateless era's _meta, and the probe's ids and tokens name their era).
func TestErasSideBySideKeepEvidenceApart(t *testing.T) {
	t.Parallel()
	rep := probeSpec(t, "testserver", nil, Options{Checks: []string{"jsonrpc", "edge", rowProgress, rowCancellation}})
	var eras []string
	for _, r := range rep.Results {
		if r.Era == "" {
			continue
		}
		if !slices.Contains(eras, string(r.Era)) {
			eras = append(eras, string(r.Era))
		}
		other := "-stateless"
		if r.Era == "stateless" {
			other = "-legacy"
		}
		for _, ev := range r.Evidence {
			switch {
			case ev.Dir == dirNote:
			case strings.Contains(ev.Text, `mcpspec-probe-`) && strings.Contains(ev.Text, other+`"`):
				t.Errorf("%s: evidence of the other era: %s %s", key(r), ev.Dir, ev.Text)
			case r.Era == "legacy" && ev.Dir == dirSent && strings.Contains(ev.Text, `"io.modelcontextprotocol/protocolVersion"`):
				t.Errorf("%s: a stateless request in the handshake era's evidence: %s", key(r), ev.Text)
			}
		}
	}
	if len(eras) != 2 {
		t.Fatalf("eras probed: %v, want both", eras)
	}
	if rep.Failed() {
		t.Errorf("%+v:%s", rep.Counts, describeFailures(rep, true))
	}
}

// TestOddParamsSentTogether sends the null and empty-array params of the two edge rows
// together: on a server that crashes or hangs on one of them, the verdict falls on that row
// alone (each request is sent again on its own), and a server answering both passes both.
func TestOddParamsSentTogether(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	checks := []string{"edge.null-params", rowEmptyArray}
	// The servers that never answer are waited for 2s rather than the default 5s (and their
	// liveness 4s rather than 10s): the verdicts are the same, and the hanging case takes 12s
	// rather than 30s.
	const short = 2 * time.Second
	for _, c := range []struct {
		name, spec      string
		nullP, emptyArr Status
		quiet           time.Duration
	}{
		{"healthy", "testserver", Pass, Pass, 0},
		{"crash-on-array", exe + " oddserver crash array", Pass, Fail, 0},
		{"crash-on-null", exe + " oddserver crash null", Fail, Pass, 0},
		{"hang-on-array", exe + " oddserver hang array", Pass, Fail, short},
		{"silent-on-array", exe + " oddserver drop array", Pass, Warn, short},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rep := probeSpec(t, c.spec, nil, Options{Checks: checks, Quiet: c.quiet, Server: serverconn.Options{Session: session.Options{ProtocolVersion: session.Version20251125}}})
			for id, want := range map[string]Status{"edge.null-params": c.nullP, rowEmptyArray: c.emptyArr} {
				r, ok := byKey(rep, id+"@legacy")
				if !ok || r.Status != want {
					t.Errorf("%s: %s %q, want %s%s", id, r.Status, r.Message, want, describeFailures(rep, false))
				}
				// Each row's evidence shows its own request.
				own := `"params":null`
				if id == rowEmptyArray {
					own = `"params":[]`
				}
				if !slices.ContainsFunc(r.Evidence, func(ev Evidence) bool { return ev.Dir == dirSent && strings.Contains(ev.Text, own) }) {
					t.Errorf("%s: evidence lacks its request %s: %+v", id, own, r.Evidence)
				}
				// The request ids of the two rows follow each other: a row may not hold a
				// frame naming both (its own and the other's).
				var ids []string
				for _, ev := range r.Evidence {
					if ev.Dir == dirSent && strings.Contains(ev.Text, `"method":"tools/list"`) {
						ids = append(ids, ev.Text)
					}
				}
				if c.name == "silent-on-array" && id == "edge.null-params" && slices.ContainsFunc(r.Evidence, func(ev Evidence) bool { return strings.Contains(ev.Text, "notifications/cancelled") }) {
					t.Errorf("%s: evidence holds the other row's cancellation: %+v", id, r.Evidence)
				}
				if (c.name == "healthy" || c.name == "silent-on-array") && len(ids) != 1 {
					t.Errorf("%s: %d tools/list requests in the evidence, want its own only: %v", id, len(ids), ids)
				}
			}
		})
	}
}
