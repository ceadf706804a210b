// Package proxy passes MCP traffic between a client and a server unchanged and records every
// frame both ways ([recording.Writer]).
//
// [Stdio] is the proxy a client starts as its server command: frames on its stdin go to the
// upstream server, the server's frames come out on its stdout, in order. [HTTP] is an
// [http.Handler] that serves Streamable HTTP and forwards each message to the upstream server
// over whatever transport its dialer speaks. The upstream side is a raw frame connection
// ([transport.Conn]), never a client session, so nothing is reordered, renumbered or
// re-encoded on the way.
package proxy
