// Package stdio runs an MCP server as a child process and exchanges newline-delimited JSON-RPC
// frames with it over the child's stdin and stdout (MCP's stdio transport).
//
// [Command] is the [transport.Dialer]: Dial spawns the process in its own process tree, drains
// its stderr continuously into an optional file (bounded: its first [StderrHead] bytes and last
// [StderrTail] or so, mode 0600) and a ring buffer of the last lines, and returns a [Conn]. A
// child that dies while the connection is open makes Recv return a *[transport.ExitError]
// carrying its exit code or signal and the end of its stderr; so does a Send that meets the
// broken pipe, once the child is reaped (both wait for the reaping, bounded, however late a
// loaded machine does it). Close shuts the server down
// politely, then firmly: close stdin, wait Grace (1s), SIGTERM the whole tree, wait TermGrace
// (0.5s), SIGKILL the whole tree; closing [Command.Abort] skips the waits.
//
// The tree is, on Linux, the child, its descendants by parent, its process group, and every
// process whose environment carries the random mark Start puts in MCPSPEC_SERVER_TREE (so a
// grandchild that called setsid and lost its parent is still found, wherever it was
// reparented); Close kills until a scan of /proc finds none, and reaps those reparented to this
// process (when the caller made it a child subreaper). On other unix systems it is the process
// group, with the kernel told to kill the child if we die; on Windows, a kill-on-close Job
// Object.
//
// The package keeps no global state and installs no signal handlers: the caller (the CLI) closes
// its connections when it is interrupted, and decides whether to become a subreaper.
package stdio
