package probe

import (
	"testing"

	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// TestReferenceServerAllPass probes mcptest over every transport: every row that applies
// passes, in both eras.
func TestReferenceServerAllPass(t *testing.T) {
	t.Parallel()
	srv := mcptest.NewServer(nil)
	t.Cleanup(srv.Close)
	tcp := mcptest.NewTCPServer(nil)
	t.Cleanup(tcp.Close)
	stateless := mcptest.NewServer(&mcptest.Options{Era: mcptest.EraStateless})
	t.Cleanup(stateless.Close)
	legacy := mcptest.NewServer(&mcptest.Options{Era: mcptest.EraLegacy, SSEResponses: true})
	t.Cleanup(legacy.Close)
	for _, c := range []struct {
		name, spec string
		so         *spec.Options
		// ran are rows that must have run (and so passed) on this server.
		ran []string
	}{
		{"stdio", "testserver", nil, []string{"stdio.json-only@legacy", "cancellation.honoured@stateless", "transport.message-size"}},
		{"http", srv.URL, &spec.Options{Transport: spec.HTTP}, []string{"http.session-required@legacy", "http.origin@stateless", "http.sse-resume@legacy"}},
		{"sse", srv.SSEURL, &spec.Options{Transport: spec.SSE}, []string{"sse.endpoint", "http.dns-rebinding@legacy"}},
		{"ws", srv.WSURL, nil, []string{"ws.binary-frame", "ws.subprotocol"}},
		{"tcp", tcp.URL(), nil, []string{"stdio.one-line-per-message@stateless"}},
		// One era only: the rows of stateless-only servers (no _meta, GET/DELETE 405) apply,
		// and a legacy server answering every request as an event stream.
		{"stdio-stateless-only", "testserver --era stateless", nil, []string{"versioning.missing-meta@stateless"}},
		{"http-stateless-only", stateless.URL, &spec.Options{Transport: spec.HTTP}, []string{"http.stateless-get-delete@stateless", "http.header-validation@stateless"}},
		{"http-legacy-only-sse-answers", legacy.URL, &spec.Options{Transport: spec.HTTP}, []string{"http.sse-resume@legacy", "http.session-delete@legacy"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rep := probeSpec(t, c.spec, c.so, Options{})
			if rep.Failed() || rep.Counts.Warn > 0 {
				t.Errorf("%+v:%s", rep.Counts, describeFailures(rep, true))
			}
			for _, k := range c.ran {
				if r, ok := byKey(rep, k); !ok || r.Status != Pass {
					t.Errorf("%s: %s %q, want it run and passed", k, r.Status, r.Message)
				}
			}
			t.Logf("%s: %+v in %s", c.name, rep.Counts, rep.Duration)
			for _, r := range rep.Results {
				t.Logf("  %-34s %-9s %-4s %6dms %s", r.ID, r.Era, r.Status, r.Duration.Milliseconds(), r.Message)
			}
		})
	}
}
