//go:build linux

package interop

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/analyze/inventory"
	"github.com/mcpspec/mcpspec/analyze/score"
	"github.com/mcpspec/mcpspec/analyze/tokens"
)

// TestScoreReferenceServers scores the official reference servers live, audit and probes included (an
// unknown tool and, where one exists, a read-only tool without its required arguments), and
// checks that the explanation accounts for every point.
func TestScoreReferenceServers(t *testing.T) {
	for name, argv := range referenceServers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			env := append([]string{"MEMORY_FILE_PATH=" + filepath.Join(t.TempDir(), "memory.jsonl")}, peerEnvExtra...)
			s := openStdioSession(t, ctx, stdioDialer(t, argv, env, t.TempDir()), nil)
			inv, err := inventory.Collect(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			c, err := tokens.NewCounter(tokens.O200kBase)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := tokens.Measure(c, inv.Tools)
			if err != nil {
				t.Fatal(err)
			}
			p := score.Probe(ctx, s, inv)
			if !p.Handshake || p.UnknownTool.Kind == score.Failure || p.InvalidCursor.Kind == score.Failure {
				t.Errorf("probes: %+v", p)
			}
			security, err := score.Audit(ctx, inv, nil)
			if err != nil {
				t.Fatal(err)
			}
			r := score.Rate(&score.Input{Inventory: inv, Tokens: rep, Probes: p, Security: security})
			if c := r.Categories[0]; c.Earned != c.Possible || c.Possible != 30 {
				t.Errorf("security %v of %v: the audit raised something on a reference server", c.Earned, c.Possible)
			}
			var earned, possible float64
			for _, c := range r.Checks {
				if c.Applies {
					earned += c.Earned
					possible += c.Possible
				}
			}
			if d := earned - r.Earned; d > 0.01 || d < -0.01 || possible != r.Possible {
				t.Errorf("checks sum to %v/%v, result says %v/%v", earned, possible, r.Earned, r.Possible)
			}
			if r.Score < 50 || r.Score > 100 {
				t.Errorf("score %d", r.Score)
			}
			var b bytes.Buffer
			if err := score.WriteText(&b, r, true); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s\n%s", name, b.String())
		})
	}
}
