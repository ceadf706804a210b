package runner_test

import (
	"strings"
	"testing"

	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/runner"
)

// TestProbeBlock runs a collection's probe: block after its tests: each row is a test of kind
// "probe", a failed row fails, an n/a row is skipped, and the observers see every row.
func TestProbeBlock(t *testing.T) {
	t.Parallel()
	good := tcpServer(t, nil)
	sloppy := tcpServer(t, &mcptest.Options{SloppyJSONRPC: true})
	for _, c := range []struct {
		name, addr string
		want       result.Status
	}{
		{"well-behaved", good.Addr, result.Passed},
		{"sloppy", sloppy.Addr, result.Failed},
	} {
		t.Run(c.name, func(t *testing.T) {
			col := parse(t, `
server: {transport: tcp, url: "ADDR"}
tests: [{id: echo, call: echo, with: {text: hi}}]
probe: {checks: [jsonrpc.method-not-found, http.get-stream]}
`, nil, "ADDR", c.addr)
			rec := &recorder{}
			run, err := runCols(t, &runner.Options{OnEvent: rec.on}, col)
			if err != nil {
				t.Fatal(err)
			}
			st := statuses(run)
			if st["echo"] != result.Passed {
				t.Errorf("the collection's own test: %s", st["echo"])
			}
			for _, era := range []string{"legacy", "stateless"} {
				row := find(t, run, "probe/jsonrpc.method-not-found@"+era)
				if row.Status != c.want || row.Kind != "probe" || !strings.Contains(row.Target, "JSON-RPC 2.0") {
					t.Errorf("%s row: %+v", era, row)
				}
				if !strings.Contains(row.Response, "→ ") || !strings.Contains(row.Response, "mcpspec/probe-unknown-method") {
					t.Errorf("%s row has no evidence: %q", era, row.Response)
				}
				if c.want == result.Failed && (len(row.Failures) != 1 || !strings.Contains(row.Failures[0].Message, "answered an unknown method")) {
					t.Errorf("%s row failures: %+v", era, row.Failures)
				}
				if skipped := find(t, run, "probe/http.get-stream@"+era); skipped.Status != result.Skipped || !strings.HasPrefix(skipped.SkipReason, "n/a: ") {
					t.Errorf("n/a row: %+v", skipped)
				}
			}
			if got := strings.Join(rec.kinds(), " "); !strings.Contains(got, "test-finished:probe/http.get-stream@stateless collection-finished") {
				t.Errorf("events: %s", got)
			}
		})
	}
}

// TestProbeBlockUnreachable reports a server the probe cannot reach as one errored test.
func TestProbeBlockUnreachable(t *testing.T) {
	t.Parallel()
	col := parse(t, `
server: {transport: tcp, url: "127.0.0.1:1"}
probe: {checks: [ping]}
`, nil)
	run, _ := runCols(t, nil, col)
	row := find(t, run, "probe")
	if row.Status != result.Errored || row.Error == nil || row.Error.Category == "" {
		t.Errorf("probe of an unreachable server: %+v %+v", row, row.Error)
	}
}
