// Package transport defines how mcpspec moves JSON-RPC frames to and from an MCP server.
//
// A transport moves whole frames and nothing more: it does not decode JSON-RPC beyond what its
// wire format needs (the HTTP transports peek at the envelope to set headers). Correlation,
// deadlines and fault classification live in package session.
//
// Each transport lives in its own subpackage (stdio, tcp, streamable, sse, ws, pipe) and offers
// a configuration type that implements [Dialer].
package transport
