// Package tcp connects to an MCP server over a raw TCP socket carrying newline-delimited
// JSON-RPC frames, the stdio framing on a socket (see package linestream).
//
// [Dialer] is the [transport.Dialer]; its connections are *[Conn].
package tcp
