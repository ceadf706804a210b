// Package mcptest is mcpspec's reference MCP server: a small, hand-written JSON-RPC server with
// well-behaved tools, resources and prompts, plus switchable failure modes that every mcpspec
// detector is tested against.
//
// Start one in a test the way you would start an [net/http/httptest.Server]:
//
//	srv := mcptest.NewServer(&mcptest.Options{HangFirstCall: true})
//	defer srv.Close()
//	// srv.URL is the Streamable HTTP endpoint, srv.SSEURL the legacy HTTP+SSE one,
//	// srv.WSURL the WebSocket one.
//
// [NewTCPServer] serves newline-delimited JSON-RPC over TCP, [ServeStdio] and [Serve] serve it
// over any reader and writer (a process's stdin/stdout, an in-memory pipe), and [RunCommand] is
// the `mcpspec testserver` verb.
//
// # Protocol
//
// The server speaks both protocol eras. The legacy era (2024-11-05 … 2025-11-25) starts with
// initialize; the stateless era (2026-07-28) has no handshake: every request carries
// _meta["io.modelcontextprotocol/protocolVersion"] and the client may call server/discover.
// [Options.Era] pins one era; the default serves both.
//
// # Tools
//
//   - echo(text): returns text unchanged as one text content.
//   - add(a, b): returns the sum as text and as structuredContent {"sum": …} (has an outputSchema).
//   - slow(milliseconds): sleeps (capped at 60000 ms), honours cancellation, reports progress
//     when the request carries a progressToken.
//   - error(message, category, as_tool): a synthetic failure; see [ErrorCategoryCode].
//   - flaky(fail_rate, seed, call_id): fails reproducibly; see [FlakyRoll].
//   - confirm(message): stateless era only; answers resultType "input_required" until the
//     client retries with inputResponses and the same requestState.
//
// Invalid arguments give a result with isError set (2025-11-25 behaviour); an unknown tool is a
// JSON-RPC error -32602.
//
// # Failure modes
//
// Failure modes target tools/call only, so the handshake and the listings stay healthy and a
// detector can reach the fault; SlowInitialize is the one exception. See [Options] for each.
package mcptest
