// Package linestream frames JSON-RPC messages as newline-delimited lines over a byte stream.
//
// It is the wire format of MCP's stdio transport, reused for raw TCP (and Unix) sockets:
// UTF-8, one message per line, each line ended by "\n" (a "\r" before it is dropped), empty
// lines skipped. The package offers three pieces:
//
//   - [Reader] splits a stream into [transport.Frame] values without buffering more than the
//     frame size limit, and reports lines it cannot frame (too long, invalid UTF-8, cut off
//     at end of stream) as frames whose Err is a *[transport.FrameError].
//   - [Writer] serializes writes from many goroutines into batches, so a burst of concurrent
//     frames costs one write call, and never blocks a caller past its context.
//   - [Conn] joins a Reader and a Writer into a [transport.Conn]; the tcp transport uses it as
//     is, and a server can use Reader and Writer for its own side.
package linestream
