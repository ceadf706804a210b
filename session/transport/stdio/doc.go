// Package stdio runs an MCP server as a child process and exchanges newline-delimited JSON-RPC
// frames with it over the child's stdin and stdout (MCP's stdio transport).
//
// [Command] is the [transport.Dialer]: Dial spawns the process in its own process tree (a
// process group on unix, with the kernel told to kill the child if we die; a kill-on-close Job
// Object on Windows), drains its stderr continuously into an optional file and a ring buffer of
// the last lines, and returns a [Conn]. A child that dies while the connection is open makes
// Recv return a *[transport.ExitError] carrying its exit code or signal and the end of its
// stderr. Close shuts the server down politely, then firmly: close stdin, wait Grace, SIGTERM
// the whole tree, wait TermGrace, SIGKILL the whole tree. No child process outlives Close.
//
// The package keeps no global state and installs no signal handlers: the caller (the CLI) closes
// its connections when it is interrupted.
package stdio
