// Package sseparse reads Server-Sent Events from an io.Reader as the WHATWG HTML standard's
// EventSource parser does (https://html.spec.whatwg.org/multipage/server-sent-events.html):
// fields event, data, id and retry; several data lines joined with "\n"; lines starting with ":"
// ignored as comments; CRLF, LF and CR line endings; one leading byte-order mark skipped.
//
// One deliberate difference: an event whose data is empty after joining (MCP's "priming" event,
// an id with an empty data field) is not returned, though its id and any retry are recorded; a
// browser would dispatch it with empty data, but an empty frame carries no message.
//
// Unlike a browser it never buffers without bound: an event larger than the configured maximum
// is skipped up to its terminating blank line and reported as a *[TooLongError], after which
// reading goes on. A stream that ends in the middle of an event returns the partial event with
// [ErrTruncated].
//
// The MCP HTTP transports (packages streamable and sse) share this parser.
package sseparse
