// Package probe is mcpspec's conformance probe: a compliance matrix of one MCP server against
// the protocol and its transport.
//
// The matrix is a table of [Row] values, each a small check with an id ("jsonrpc.parse-error"),
// a title, the section of the MCP specification (or JSON-RPC 2.0, or RFC) it checks, the
// transports and eras it applies to, and a function that returns a verdict: pass, fail, warn
// or n/a. [Rows] lists them in run order; [Run] runs them and returns a [Report] in which
// every row carries its evidence — the frames and HTTP exchanges it sent and received.
//
// # Eras
//
// The probe opens the server in both protocol eras where it speaks them: the handshake era
// (initialize, 2024-11-05 … 2025-11-25, probed at 2025-11-25) and the stateless era
// (2026-07-28, server/discover and per-request _meta). Rows that exist in both eras run once
// in each; rows about the transport alone run once. An era the server does not speak is
// listed in the report with the reason, and its rows are left out. A pinned protocol version
// (Options.Server.Session.ProtocolVersion) probes that era only.
//
// # Verdicts
//
// A row fails when the server breaks a MUST of the specification it cites (or crashes, or
// never answers a request that needs an answer); it warns when the server departs from a
// SHOULD, or from what most implementations do, in a way a client can live with; it is n/a
// when it does not apply (another transport, an optional feature the server does not offer).
// [Report.Failed] is true when a row failed, or, with Options.Strict, when one warned.
//
// # Sessions and raw requests
//
// Sessions are opened through session/serverconn, one main session per era, reopened when a
// row kills the server. Rows send hand-built frames on the session's raw path
// (session.SendRaw, RequestRaw, with OnFrame as the evidence recorder) and, for the HTTP rows,
// plain net/http requests to the server's URL. Every wait has a deadline (Options.RowTimeout
// per row); a server that hangs costs at most that per row.
//
// # Overlapping waits
//
// Some rows wait for what may never come, so waits overlap where each row's evidence stays its
// own (each era has its own frame hub, and a row running alongside another claims the frames
// of its ids): over stdio the eras run side by side, each with its own server process; the
// cancellation row's call goes out with the progress row's call, its uncancelled twin and
// control; and edge.null-params sends edge.empty-array's request with its own. A row run
// alongside an earlier one reports its result at its own turn in the table.
package probe
