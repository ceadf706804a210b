// Package fuzz is mcpspec's protocol fuzzer: it sends a server malformed and edge-case frames
// and tool arguments derived from each tool's inputSchema, classifies how the server handles
// each case, and reports the cases it does not survive — minimised, and savable as regression
// tests a collection replays (see [WriteFindings] and the collection's `frame:` step).
//
// [Run] takes an [Opener] (a *serverconn.Opener) and opens sessions of its own: after each
// case it pings the server, so a crash or a hang is blamed on the case that caused it, and
// after a case that lost the session it opens a new one (restarting a stdio server) and goes
// on. Cases come from package mutate, seeded: the same seed against the same server gives the
// same cases. A run is bounded by Options.Iterations and Options.Time.
//
// # What a server must do
//
// The rules come from JSON-RPC 2.0 and the MCP specification; mutate.Judge decides which apply
// to a frame:
//
//   - A well-formed MCP message (one JSON object in UTF-8 with no embedded line break,
//     "jsonrpc": "2.0", a string method, a string or safe-integer id, object params) must be
//     survived, and answered when it is a request (JSON-RPC 2.0 §5: "the Server MUST reply with
//     a Response"); an error answer is graceful. A request left unanswered past HangAfter
//     while the server still answers a ping is a hang; a tools/call may take long (slow), a
//     protocol request may not. Ending the session after such a message is a crash.
//   - Any other frame breaks the transport contract (MCP stdio: "the client MUST NOT write
//     anything to the server's stdin that is not a valid MCP message"; a batch is valid only in
//     2025-03-26; a notification carries no id; only pings may come before initialize;
//     RFC 8259 §9 lets a parser limit size and nesting). The server may answer it with an error,
//     ignore it, or close the connection and stay up (closed). It must not die of it: a
//     process that exits after such a frame, whatever its status (the Go SDK v1.8.0 exits 1 on
//     a line that is not JSON), is a crash, as are death by a signal and a crash report on
//     stderr (a Go panic, a Node uncaught exception, a Python traceback, a Rust panic). A server that stops answering after such a
//     frame may be waiting for the rest of a message (desynced): the session is replaced, and
//     it is not a bug.
//   - Whatever the server sends must be well-formed JSON-RPC (JSON-RPC 2.0 §4, §5: exactly one
//     of result and error, an error with an integer code and a string message, an id):
//     anything else is malformed.
//   - tools/call arguments that break the tool's inputSchema answered with a success result
//     are accepted-invalid (MCP 2025-11-25: input validation errors are tool errors); a bug
//     only with Options.Strict, since many servers are lenient on purpose.
//
// A tool annotated destructiveHint is not called unless Options.IncludeDestructive, nor one
// annotated openWorldHint unless Options.IncludeOpenWorld; frame cases never name a tool that
// exists.
//
// Every other schema case carries a progressToken in params._meta ([mutate.Case.Progress]).
//
// # Findings
//
// Cases that show one cause are one [Finding] (see findingKey): a crash's exit and crash
// report headline, a hang's method or an id the server changed, a malformed frame's fault;
// otherwise cases that end the same way (outcome, family, kind of mutation, tool or method).
// A finding that does not show again on a fresh session is unconfirmed ([Report.Unconfirmed])
// and fails nothing; crashes that come with a session's number of calls whatever the case are
// one finding of kind after-calls; a finding a plain ping (or the tool called with {}) shows
// too is AnyInput and not shrunk. Each is reproduced on a fresh session and minimised within Options.MinimizeRuns
// reproductions: repeated runs (a long string, deep nesting) are cut by binary search, object
// members removed, small frames that are not JSON cut by delta debugging — keeping, for a
// schema case, the property the mutation set. A crash that does not show again on its own case
// may have come a moment after an earlier case was answered (a Node timer that throws once the
// handler returned), found only during the next case: the case and then up to three cases run
// before it on its session are tried, each followed by a second ping after a pause, and the
// finding is blamed on the first that crashes. [Report.Tests] renders the findings as failed
// test cases for the reporters.
package fuzz
