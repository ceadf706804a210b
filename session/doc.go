// Package session is mcpspec's MCP client: one session with one server over one transport
// connection.
//
// [Open] dials, detects the protocol era (server/discover for the stateless 2026-07-28 era,
// initialize for 2024-11-05 … 2025-11-25) unless a version is pinned, and performs the
// handshake. A server silent to server/discover through a short probe window gets initialize
// too, and whichever answer decides the era first wins, so a server slow to start is not
// mistaken for a legacy one. The session then correlates many concurrent requests on the connection by integer
// id: one reader goroutine decodes only each frame's envelope and hands the raw result to the
// waiting caller; no goroutine is started per call.
//
// Every failed call is one *[Error] with exactly one [Category] (Crash, Deadlock, Hang, Timeout,
// Disconnected, Malformed, ProtocolError, ServerError, Cancelled). What the session cannot route
// to a call — an unknown id, a late or duplicate response, a malformed frame without an id — is
// a [Finding], reported through Options.OnFinding and [Session.Findings], never dropped; the
// one exception is the late answer to the handshake request that lost that race, which is
// expected.
//
// Cancellation. A call given up (its ctx cancelled, its timeout or the hang grace passed) is
// cancelled at the server: with notifications/cancelled in the legacy era and on stream
// transports in every era; over Streamable HTTP in the stateless era by the connection itself
// (a [RequestCanceller]), which closes the request's SSE stream or aborts its POST, and then no
// notification is sent. initialize and the era probe are never cancelled.
//
// Headers. Over Streamable HTTP in the stateless era, [Session.CallTool] mirrors the arguments
// a tool's inputSchema annotates with x-mcp-header into Mcp-Param-* request headers (SEP-2243,
// with the Go SDK v1.8.0's rules: string, integer and boolean values, nested properties,
// =?base64?…?= for what is not safe header text), from the schemas of the last
// [Session.ListTools]. A call of a tool that listing did not have goes without them; if the
// server then answers -32020 (header mismatch), the session lists the tools once and retries the
// call once. Other transports and the legacy era send no such headers.
//
// Tasks (2025-11-25, experimental). [Session.CallTool] makes a tools/call a task when asked
// (CallOptions.Task) or when the last [Session.ListTools] marked the tool's
// execution.taskSupport "required" on a server that declared tasks.requests.tools.call (the
// cache of the Mcp-Param-* headers keeps it; a session that never listed the tools of such a
// server lists them once, before its first tools/call): tools/call with params.task, tasks/get at the
// server's pollInterval, tasks/result, as the TypeScript SDK's client does. An input_required
// task gets tasks/result at once: the server sends its requests (elicitation, sampling) on it,
// and the session answers them with the canned replies, adding the related-task _meta. The
// caller gets the tool result with a Timing over the whole flow, or one *[Error]: the call's
// timeout bounds the flow (Timeout), ctx cancels it (Cancelled), and either sends tasks/cancel;
// a task that failed or that the server cancelled is a ServerError carrying its statusMessage
// (an isError result of a failed task is returned as a plain call's would be); an invalid task
// object is a ProtocolError. [Session.GetTask], [Session.TaskResult], [Session.ListTasks] and
// [Session.CancelTask] are the plain methods, and notifications/tasks/status reach
// Options.OnNotification (and wake the call polling that task). The call's progress token
// stays valid for the task's lifetime: notifications/progress that the server sends with it
// after the CreateTaskResult reach CallOptions.OnProgress until the task is terminal or the call
// ends (deadline, cancel), and never after CallTool returned. Over Streamable HTTP in the
// legacy era the POST's stream ends with the CreateTaskResult, so such progress can only come on
// the optional GET stream (streamable.Dialer.OpenGETStream), and only from a server that sends it
// there.
//
// For fuzzers and load generators, [Session.SendRaw], [Session.NextID] and [Session.RequestRaw]
// send hand-built frames, and Options.OnFrame sees every frame in both directions.
package session
