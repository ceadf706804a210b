// Package ws is a WebSocket transport for MCP. WebSocket is in no version of the MCP
// specification (SEP-1288 is a draft), but older SDK clients shipped it: one JSON-RPC message per
// text frame, negotiated with the "mcp" subprotocol. mcpspec supports it as a custom transport,
// not as a conformance target.
//
// The transport is built on github.com/coder/websocket, whose methods are safe for concurrent
// use except reading, which the Conn's single reader goroutine owns; so Send may be called from
// many goroutines with no extra locking. Note that the library closes the connection when a
// Send's ctx ends in the middle of a write.
//
// Received frames: a text message is delivered as is; a binary message as a Frame whose Err is a
// *[transport.FrameError] "binary-frame"; a text message that is not valid UTF-8 as
// "invalid-utf8"; one larger than MaxFrameSize as "too-long" (it is read and discarded, never
// buffered whole, and the connection goes on). The server closing the connection is terminal for
// Recv: an error wrapping io.EOF for a normal closure, the close status otherwise.
package ws
