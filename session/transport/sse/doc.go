// Package sse is MCP's legacy HTTP+SSE transport (protocol version 2024-11-05): the client
// opens a Server-Sent Events stream with GET, the server's first "endpoint" event names the URI
// to POST messages to, and every server message arrives as a "message" event on the stream.
//
// Dial waits, within ctx's deadline, for the endpoint event; the endpoint is resolved against the
// stream URL with its query kept as the server wrote it (the session parameter is opaque:
// sessionId, session_id …) and must have the same origin as the stream URL. Send POSTs each
// message there and expects 2xx (a non-2xx answer is a *[transport.StatusError]); Recv delivers
// the stream's messages; the end of the stream is terminal for Recv (an error wrapping io.EOF, or
// the read error). Close cancels the stream and waits for its reader.
package sse
