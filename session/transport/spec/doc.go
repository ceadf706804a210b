// Package spec turns a server SPEC — the string a user passes as --server — into a
// [transport.Dialer].
//
// A SPEC is one of:
//
//   - a command line ("python -m my_server --flag 'a b'"), started as a child process and spoken
//     to over stdio; words are split with shell-like quoting (see [Split]) but nothing is
//     expanded: no variables, globs or pipes;
//   - "testserver [flags]", the built-in reference server, started as
//     "<this executable> testserver --transport stdio [flags]" so nothing needs installing;
//   - an http:// or https:// URL: Streamable HTTP, falling back to the legacy HTTP+SSE transport
//     when the server does not speak Streamable HTTP;
//   - a ws:// or wss:// URL: WebSocket, one JSON-RPC message per text frame;
//   - a tcp://host:port address: newline-delimited JSON-RPC over a TCP socket.
//
// [Options.Transport] forces a transport instead of guessing it from the SPEC's shape.
//
// The package reads no environment and writes nothing; the caller supplies the executable path,
// the extra environment and where to keep the server's stderr.
package spec
