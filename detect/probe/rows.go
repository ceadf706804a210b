package probe

import (
	"slices"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// Rows returns the probe's table, in run order: the handshake and versions, JSON-RPC, the
// edge cases of requests, features, progress and cancellation, the transport rows, and last
// the rows that judge everything the server sent during the era.
func Rows() []Row {
	var rows []Row
	for _, group := range [][]Row{
		lifecycleRows(),
		jsonrpcRows(),
		edgeRows(),
		featureRows(),
		progressRows(),
		framingRows(),
		httpRows(),
		originRows(),
		sseRows(),
		wsRows(),
		eraRows(),
	} {
		rows = append(rows, group...)
	}
	return rows
}

// Spec citations: the document and version, then the section path.
const (
	spec1125      = "MCP 2025-11-25 · "
	spec0728      = "MCP 2026-07-28 · "
	specJSONRPC   = "JSON-RPC 2.0 · "
	specWebSocket = "RFC 6455 · "
)

// applies is a Row.Applies.
type applies = func(Target) (bool, string)

// every combines conditions: the row applies when all do.
func every(conds ...applies) applies {
	return func(t Target) (bool, string) {
		for _, c := range conds {
			if ok, why := c(t); !ok {
				return false, why
			}
		}
		return true, ""
	}
}

// inEra applies in one era.
func inEra(era session.Era) applies {
	return func(t Target) (bool, string) {
		if t.Era != era {
			return false, "applies to the " + eraName(era) + " only"
		}
		return true, ""
	}
}

// onlyEra applies when the server speaks one era only, that one.
func onlyEra(era session.Era) applies {
	return func(t Target) (bool, string) {
		if !t.only(era) {
			return false, "applies to servers that speak the " + eraName(era) + " only"
		}
		return true, ""
	}
}

// over applies on the given transports.
func over(ts ...spec.Transport) applies {
	return func(t Target) (bool, string) {
		if !slices.Contains(ts, t.Transport) {
			names := make([]string, len(ts))
			for i, x := range ts {
				names[i] = transportName(x)
			}
			return false, "applies to " + strings.Join(names, " and ") + " only"
		}
		return true, ""
	}
}

// notOver applies on every transport but the given ones.
func notOver(ts ...spec.Transport) applies {
	return func(t Target) (bool, string) {
		if slices.Contains(ts, t.Transport) {
			return false, "does not apply to " + transportName(t.Transport)
		}
		return true, ""
	}
}

// loopback applies to network servers on a loopback address.
func loopback(t Target) (bool, string) {
	if !t.Loopback {
		return false, "applies to servers on a loopback address only"
	}
	return true, ""
}

func eraName(e session.Era) string {
	if e == session.EraStateless {
		return "stateless era (2026-07-28)"
	}
	return "handshake era (2024-11-05 … 2025-11-25)"
}

func transportName(t spec.Transport) string {
	switch t {
	case spec.Stdio:
		return "stdio"
	case spec.HTTP:
		return "Streamable HTTP"
	case spec.SSE:
		return "HTTP+SSE"
	case spec.WS:
		return "WebSocket"
	case spec.TCP:
		return "TCP"
	}
	return string(t)
}

// Short waits of rows that watch for something that should not come.
const (
	// settle is how long a row keeps listening after the last answer it needed.
	settle = 300 * time.Millisecond
)
