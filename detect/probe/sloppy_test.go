package probe

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// TestSloppyServerFailures probes mcptest with every sloppy mode on and checks that exactly
// the rows those modes break fail, over every transport.
func TestSloppyServerFailures(t *testing.T) {
	t.Parallel()
	opts := &mcptest.Options{SloppyHTTP: true, SloppyJSONRPC: true, SloppyStdio: true, IgnoreCancel: true}
	srv := mcptest.NewServer(opts)
	t.Cleanup(srv.Close)
	tcp := mcptest.NewTCPServer(opts)
	t.Cleanup(tcp.Close)

	// SloppyJSONRPC breaks these in every era of every transport.
	jsonrpc := []string{
		"lifecycle.version-unknown@legacy",
		"jsonrpc.method-not-found@legacy", "jsonrpc.method-not-found@stateless",
		"jsonrpc.notification-unanswered@legacy", "jsonrpc.notification-unanswered@stateless",
		"jsonrpc.response-shape@legacy", "jsonrpc.response-shape@stateless",
	}
	// SloppyStdio breaks the framing of the newline-delimited transports.
	lines := []string{
		"stdio.json-only@legacy", "stdio.json-only@stateless",
		"stdio.one-line-per-message@legacy", "stdio.one-line-per-message@stateless",
	}
	web := func(eras ...string) []string {
		var out []string
		for _, era := range eras {
			out = append(out, "http.dns-rebinding@"+era, "http.cors@"+era)
		}
		return out
	}
	// SloppyHTTP breaks the Streamable HTTP session rules.
	sessions := []string{
		"http.session-required@legacy", "http.session-unknown@legacy", "http.session-delete@legacy",
		"http.get-stream@legacy", "http.protocol-version-header@legacy",
		"http.notification-202@legacy", "http.notification-202@stateless", "http.header-validation@stateless",
	}
	for _, c := range []struct {
		name, spec string
		so         *spec.Options
		fail       [][]string
	}{
		{"stdio", "testserver --sloppy", nil, [][]string{jsonrpc, lines}},
		{"tcp", tcp.URL(), nil, [][]string{jsonrpc, lines}},
		{"http", srv.URL, &spec.Options{Transport: spec.HTTP}, [][]string{jsonrpc, sessions, web("legacy", "stateless")}},
		{"sse", srv.SSEURL, &spec.Options{Transport: spec.SSE}, [][]string{jsonrpc, web("legacy")}},
		{"ws", srv.WSURL, nil, [][]string{jsonrpc}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rep := probeSpec(t, c.spec, c.so, Options{})
			var want, got, warned []string
			for _, f := range c.fail {
				want = append(want, f...)
			}
			if c.name == "sse" {
				// HTTP+SSE has no stateless era.
				want = slices.DeleteFunc(want, func(k string) bool { return strings.HasSuffix(k, "@stateless") })
			}
			for _, r := range rep.Results {
				switch r.Status {
				case Fail:
					got = append(got, key(r))
				case Warn:
					warned = append(warned, key(r))
				}
			}
			slices.Sort(want)
			slices.Sort(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("failed rows (-want +got):\n%s%s", diff, describeFailures(rep, false))
			}
			// IgnoreCancel answers cancelled calls: a SHOULD, so a warning.
			if !slices.Contains(warned, "cancellation.honoured@legacy") {
				t.Errorf("cancellation.honoured@legacy did not warn; warnings: %v", warned)
			}
			if !rep.Failed() {
				t.Error("Report.Failed is false for a sloppy server")
			}
		})
	}
}
