// Package streamable is the Streamable HTTP transport of MCP (protocol versions 2025-03-26 to
// 2026-07-28): every client message is one POST to the server's endpoint, answered by 202 (no
// message), one JSON message (or a batch) or a Server-Sent Events stream carrying the response
// and any related messages. It implements [transport.Conn] and the optional
// [transport.Versioned] and [transport.Sessioned].
//
// Headers. Every POST carries Content-Type: application/json, Accept: application/json,
// text/event-stream, the [Dialer]'s custom headers (Authorization …), Mcp-Session-Id once the
// server issued one, and MCP-Protocol-Version once [Conn.SetProtocolVersion] was called. The
// transport peeks at the outgoing message's envelope and always sets Mcp-Method (requests and
// notifications) and Mcp-Name (params.name of tools/call and prompts/get, params.uri of
// resources/read), whatever the protocol version: 2026-07-28 servers require them and older
// servers ignore unknown headers, so sending them always keeps one code path and lets a tester
// see exactly what went on the wire. A value that is not printable ASCII is not sent as a header.
// [Conn.SendWithHeader] (a [transport.HeaderSender]) adds headers for one POST: the session
// passes the Mcp-Param-* headers of a stateless-era tools/call that way, one for each argument
// the tool's inputSchema annotates with x-mcp-header (SEP-2243), computed from its last
// tools/list; the transport itself never derives them.
//
// Streams. A text/event-stream answer is read by a goroutine owned by the connection; each
// "message" event (or an event with no name) is delivered to Recv, priming events and comments
// are ignored. When such a stream ends before the response to its request arrived and the server
// gave event ids, the transport resumes it with GET and Last-Event-ID, honouring retry:, a bounded
// number of times — for protocol versions before 2026-07-28 only, which has no resumption.
// With [Dialer.OpenGETStream] the transport also opens the optional server→client GET stream once
// notifications/initialized was accepted; 405 means the server offers none.
//
// Cancellation. [Conn.CancelRequest] cancels a request by its JSON-RPC id the 2026-07-28 way:
// it closes the request's SSE stream, or aborts its POST while the answer is awaited, and
// reports true; before 2026-07-28 a disconnect is not a cancellation, so it touches nothing and
// reports false (the client sends notifications/cancelled). A Send whose ctx ends before the
// answer likewise drops the POST; in the stateless era its error reports RequestCancelled, the
// session's sign that the server saw the cancellation. The Conn keeps one table entry per
// pending request with an integer id, removed when the answer completes.
//
// Errors. An HTTP answer outside 2xx comes back from Send as a *[transport.StatusError] and no
// frame is delivered; a connection failure (refused, reset) is a plain wrapped error. A response
// body larger than the frame limit, not valid UTF-8, or cut inside an event is delivered as a
// Frame whose Err is a *[transport.FrameError].
//
// Connections. By default each Conn has its own client from [NewClient]: HTTP/1.1 keep-alive
// connections (HTTP/2 over TLS where the server offers it), at most [Dialer.Connections] per
// host, with [ConnBufferSize] read and write buffers instead of net/http's 4 KB each. Over
// HTTP/1.1 every request in flight holds a connection (and net/http's two goroutines for it),
// since a server answers a slow call on that call's own POST. [Dialer.UnencryptedHTTP2] speaks
// HTTP/2 without TLS instead (h2c with prior knowledge, opt-in: the server must accept it), so
// that requests in flight are streams sharing a few connections.
//
// [Auto] is a Dialer that also names the legacy HTTP+SSE transport (package sse) for the same
// URL as its Fallback, for servers that reject the Streamable handshake with 400, 404 or 405.
package streamable
