package interop

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpspec/mcpspec/detect/deadlock"
	"github.com/mcpspec/mcpspec/detect/headofline"
	"github.com/mcpspec/mcpspec/detect/race"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport"
)

// The detectors must raise no false alarm on servers written by others: every one of them is
// run against the go-sdk peer here and against the Node peers (detect_node_test.go), and must
// find nothing. Slow calls are allowed (a tool that takes seconds by design); deadlocks,
// crashes, races and head-of-line blocking are not.

// detectorChecks is what to run against one server.
type detectorChecks struct {
	// deadlock is the probe; nil probes every tool with the defaults.
	deadlock *deadlock.Options
	// races are the race checks, one per tool.
	races []race.Options
	// hol is the head-of-line check; nil skips it (holWhy says why).
	hol    *headofline.Options
	holWhy string
	// holMayBeInconclusive accepts "cannot tell" (no call of the server is slow enough).
	holMayBeInconclusive bool
}

// openerFor returns an opener whose every session dials with dial.
func openerFor(dial func() (transport.Dialer, error)) *serverconn.Opener {
	return serverconn.New(serverconn.Options{
		Dial:    func(string) (transport.Dialer, error) { return dial() },
		Session: session.Options{ConnectTimeout: 30 * time.Second, RequestTimeout: 60 * time.Second},
	})
}

// runDetectorsClean runs every check of c against op's server and fails on any finding.
func runDetectorsClean(t *testing.T, op *serverconn.Opener, c detectorChecks) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	t.Run("deadlock", func(t *testing.T) {
		r, err := deadlock.Run(ctx, op, c.deadlock)
		if err != nil {
			t.Fatalf("deadlock probe: %v", err)
		}
		logReport(t, r.WriteText)
		if r.Found() || r.DeadlockCount != 0 || r.CrashCount != 0 || r.Verdict == deadlock.VerdictIncomplete {
			t.Errorf("false alarm: verdict %s, deadlock_count %d, crash_count %d", r.Verdict, r.DeadlockCount, r.CrashCount)
		}
		if len(r.Probes) < 2 {
			t.Errorf("only %d probes: the check probed nothing", len(r.Probes))
		}
	})
	for _, o := range c.races {
		t.Run("race/"+o.Tool, func(t *testing.T) {
			r, err := race.Run(ctx, op, &o)
			if err != nil {
				t.Fatalf("race check: %v", err)
			}
			logReport(t, r.WriteText)
			if r.Found() || r.Verdict == race.VerdictIncomplete {
				t.Errorf("false alarm: verdict %s: %s", r.Verdict, r.Diagnosis)
			}
		})
	}
	t.Run("head-of-line", func(t *testing.T) {
		if c.hol == nil {
			t.Skip(c.holWhy)
		}
		r, err := headofline.Run(ctx, op, c.hol)
		if err != nil {
			t.Fatalf("head-of-line check: %v", err)
		}
		logReport(t, r.WriteText)
		ok := r.Verdict == headofline.VerdictConcurrent || (c.holMayBeInconclusive && r.Verdict == headofline.VerdictInconclusive)
		if r.Found() || !ok {
			t.Errorf("verdict %s: %s", r.Verdict, r.Diagnosis)
		}
	})
}

// logReport logs a detector's text report.
func logReport(t *testing.T, write func(w io.Writer) error) {
	t.Helper()
	var b strings.Builder
	_ = write(&b)
	t.Logf("report:\n%s", b.String())
}

// TestDetectorsCleanOnGoSDK runs the detectors against the official Go SDK's server over an
// in-memory stream and over stateful Streamable HTTP (each call a POST of its own).
func TestDetectorsCleanOnGoSDK(t *testing.T) {
	t.Parallel()
	checks := detectorChecks{
		races: []race.Options{
			{Tool: "echo", Args: map[string]any{"message": "hello"}},
			{Tool: "add", Args: map[string]any{"a": 1, "b": 2}},
		},
		hol: &headofline.Options{SlowTool: "slow", SlowArgs: map[string]any{"millis": 300}, FastTool: "echo", FastArgs: map[string]any{"message": "x"}, Rounds: 3},
	}
	t.Run("pipe", func(t *testing.T) {
		t.Parallel()
		p := newGoPeer()
		runDetectorsClean(t, openerFor(func() (transport.Dialer, error) { return servePipe(t, p), nil }), checks)
	})
	t.Run("streamable-stateful", func(t *testing.T) {
		t.Parallel()
		p := newGoPeer()
		d := serveStreamable(&mcp.StreamableHTTPOptions{})(t, p)
		runDetectorsClean(t, openerFor(func() (transport.Dialer, error) { return d, nil }), checks)
	})
}
