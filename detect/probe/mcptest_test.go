package probe

import (
	"testing"

	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// TestReferenceServerAllPass probes mcptest over every transport: every row that applies
// passes, in both eras.
func TestReferenceServerAllPass(t *testing.T) {
	srv := mcptest.NewServer(nil)
	t.Cleanup(srv.Close)
	tcp := mcptest.NewTCPServer(nil)
	t.Cleanup(tcp.Close)
	for _, c := range []struct {
		name, spec string
		so         *spec.Options
	}{
		{"stdio", "testserver", nil},
		{"http", srv.URL, &spec.Options{Transport: spec.HTTP}},
		{"sse", srv.SSEURL, &spec.Options{Transport: spec.SSE}},
		{"ws", srv.WSURL, nil},
		{"tcp", tcp.URL(), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rep := probeSpec(t, c.spec, c.so, Options{})
			if rep.Failed() || rep.Counts.Warn > 0 {
				t.Errorf("%+v:%s", rep.Counts, describeFailures(rep, true))
			}
			t.Logf("%s: %+v in %s", c.name, rep.Counts, rep.Duration)
			for _, r := range rep.Results {
				t.Logf("  %-34s %-9s %-4s %6dms %s", r.ID, r.Era, r.Status, r.Duration.Milliseconds(), r.Message)
			}
		})
	}
}
