package analysis

import (
	"fmt"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
)

// The slow-start rule of a cold start.
const (
	// SlowHandshakeMs is the median handshake, in ms, from which a cold start is slow: a
	// client with a start timeout of a few seconds (mcpspec's --connect-timeout set to 2s, an
	// agent host's) gives up on the server.
	SlowHandshakeMs = 1000
	// slowFactor is how much longer than the first call the handshake must take: a server
	// that is slow at everything is slow, not slow to start.
	slowFactor = 10
	// mcpspecConnectMs and tsSDKRequestMs are the start timeouts named beside a slow start:
	// mcpspec's default --connect-timeout and the TypeScript SDK's default request timeout
	// (DEFAULT_REQUEST_TIMEOUT_MSEC), which bounds its initialize.
	mcpspecConnectMs, tsSDKRequestMs = 10000, 60000
)

// slowStart judges a cold start's phases: a median handshake of SlowHandshakeMs or more,
// at least slowFactor times the first call's median after it, is a slow start (nil otherwise,
// and for any other scenario).
func slowStart(run *metrics.Run) *metrics.SlowStart {
	if run.Scenario.Kind != "cold_start" {
		return nil
	}
	var hs, fc *metrics.OpMetrics
	for i := range run.PerOp {
		op := &run.PerOp[i]
		if op.Kind != metrics.KindPhase {
			continue
		}
		switch op.Name {
		case "handshake":
			hs = op
		case "first_call":
			fc = op
		}
	}
	if hs == nil || hs.Latency.Count == 0 || hs.Latency.P50 < SlowHandshakeMs {
		return nil
	}
	s := &metrics.SlowStart{HandshakeP50Ms: hs.Latency.P50, HandshakeMaxMs: hs.Latency.Max}
	after := "no call was made after it (give --tool to time one)"
	if fc != nil && fc.Latency.Count > 0 {
		if hs.Latency.P50 < slowFactor*fc.Latency.P50 {
			return nil
		}
		s.FirstCallP50Ms = fc.Latency.P50
		after = "the first call then answered in " + ms(fc.Latency.P50)
	}
	s.Detail = fmt.Sprintf("slow start: the handshake took %s (median of %d; slowest %s) while %s. A client that gives a server less than %s to start gives up on it as if it did not speak MCP: mcpspec waits %s by default (--connect-timeout), the TypeScript SDK %s",
		ms(hs.Latency.P50), hs.Latency.Count, ms(hs.Latency.Max), after, ms(hs.Latency.Max), ms(mcpspecConnectMs), ms(tsSDKRequestMs))
	if hs.Latency.Max >= mcpspecConnectMs {
		s.Detail += "; the slowest start is past mcpspec's own default"
	}
	s.Detail += ". Gate it with --threshold 'p50:handshake<=" + ms(SlowHandshakeMs) + "'."
	return s
}
