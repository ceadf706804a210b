// Package interop holds mcpspec's interoperability tests: the client session layer (package
// session and its transports) against MCP servers somebody else wrote.
//
// Two groups of peers:
//
//   - Go peers from the official SDK (github.com/modelcontextprotocol/go-sdk), served in-process
//     on 127.0.0.1 or over an in-memory pipe. They need nothing installed and always run: a
//     stateless Streamable HTTP server (protocol 2026-07-28), stateful ones (legacy handshake),
//     the legacy HTTP+SSE handler and the newline-delimited stream transport over TCP.
//   - Node peers pinned in package.json (server-everything, server-filesystem, server-memory).
//     They run only with MCPSPEC_INTEROP=1, after npm ci in this directory, and belong in a
//     loopback-only network namespace.
//
// TestLeakCalibration (leak_test.go) soaks the reference server with and without its
// --leak-kb fault, and the Node servers, and checks the leak analysis (loadgen/leak) on their
// memory: the test binary serves as `mcpspec testserver` for it (TestMain). package.json also
// pins mcp-stress (optional, Linux x64), the load peer bench/cmd/loadbench compares with.
//
// The buggy/healthy twins (buggy_*_test.go, testdata/buggy-*) check that the detectors
// generalise to servers written without them in mind: pairs that differ only in one bug
// (lazy-init deadlock, race, head-of-line, leak, crash on bad input), written with the
// TypeScript SDK, the Go SDK and a threaded stdlib-only Python server. Each buggy twin must be
// found with the right class and each healthy twin must raise nothing. They need node, python3
// and go on PATH (and MCPSPEC_INTEROP=1).
//
// To run everything:
//
//	(cd interop && npm ci)
//	unshare --net sh -c 'ip link set lo up && MCPSPEC_INTEROP=1 GZIP_ALLOWED_DOMAINS=127.0.0.1 go test -count=1 ./interop/...'
//
// The package has no code besides its tests.
package interop
