// Package mcptest is mcpspec's reference MCP server: a small, hand-written JSON-RPC server with
// well-behaved tools, resources and prompts, plus switchable failure modes that every mcpspec
// detector is tested against.
//
// Start one in a test the way you would start an [net/http/httptest.Server]:
//
//	srv := mcptest.NewServer(&mcptest.Options{HangFirstCall: true})
//	defer srv.Close()
//	// srv.URL is the Streamable HTTP endpoint, srv.SSEURL the legacy HTTP+SSE one,
//	// srv.WSURL the WebSocket one.
//
// [NewTCPServer] serves newline-delimited JSON-RPC over TCP, [ServeStdio] and [Serve] serve it
// over any reader and writer (a process's stdin/stdout, an in-memory pipe), and [RunCommand] is
// the `mcpspec testserver` verb.
//
// # Protocol
//
// The server speaks both protocol eras. The legacy era (2024-11-05 … 2025-11-25) starts with
// initialize; the stateless era (2026-07-28) has no handshake: every request carries
// _meta["io.modelcontextprotocol/protocolVersion"] and the client may call server/discover.
// [Options.Era] pins one era; the default serves both.
//
// # Tools
//
//   - echo(text): returns text unchanged as one text content.
//   - add(a, b): returns the sum as text and as structuredContent {"sum": …} (has an outputSchema).
//   - slow(milliseconds): sleeps (capped at 60000 ms), honours cancellation, reports progress
//     when the request carries a progressToken.
//   - error(message, category, as_tool): a synthetic failure; see [ErrorCategoryCode].
//   - flaky(fail_rate, seed, call_id): fails reproducibly; see [FlakyRoll].
//   - confirm(message): stateless era only; answers resultType "input_required" until the
//     client retries with inputResponses and the same requestState.
//   - ask(kind, message): legacy era only; during the call sends the client
//     elicitation/create (kind "elicitation", the default), sampling/createMessage ("sampling")
//     or roots/list ("roots"), waits for the answer (bounded by the call's context and
//     [MaxAskWait]) and returns the client's result as text (and as structuredContent). A
//     client that did not declare the capability at initialize, or that answers with a
//     JSON-RPC error, gets a result with isError set saying so.
//   - roots(): legacy era only; lists the client's roots with roots/list, as ask does.
//   - job(milliseconds, fail, as_tool, ask, poll_ms): only with [Options.Tasks] (--tasks) in a
//     2025-11-25 session; execution.taskSupport "required", so it runs only as a task (a plain
//     call is -32601). It works for milliseconds (default 100, capped at 60000); ask sends the
//     client elicitation/create halfway, moving the task to input_required until a tasks/result
//     carries the request; fail ends the task failed with a JSON-RPC error -32000 (with as_tool,
//     an isError result); poll_ms is the pollInterval the task suggests (default 50). When the
//     tools/call carried a progressToken, the job reports progress with it in up to 10 steps
//     while it works, after the CreateTaskResult (the token is valid for the task's lifetime);
//     over Streamable HTTP the tools/call's stream has ended by then, so that progress goes to
//     the session's GET stream, and is dropped when the client opened none. With --tasks, slow
//     is marked taskSupport "optional" (as a task, its progress travels the same way).
//   - route(region, priority, urgent, target.shard, text): only with [Options.ParamHeaders]
//     (--param-headers); returns its arguments. All but text are annotated with x-mcp-header
//     (SEP-2243), so over Streamable HTTP a stateless-era tools/call must mirror them in
//     Mcp-Param-Region, -Priority, -Urgent and -Shard; a missing, unexpected or mismatched one
//     is answered HTTP 400 with -32020, by the Go SDK v1.8.0's rules (an empty header counts as
//     missing; =?base64?…?= values are decoded; integers compare numerically).
//   - hostile(text) and leak{{env.DB_URL}}(text): only with [Options.HostileText]
//     (--hostile-text); hostile fails with terminal escapes and Markdown ([HostileText]), the
//     other is an echo whose name is a collection template.
//   - time(): only with [Options.TimeTool] (--time-tool); the current time as text and as
//     structuredContent {time}: answers that differ by design.
//   - delete_notes() and fetch_url(url): only with [Options.HintedTools] (--hinted-tools);
//     annotated destructiveHint and openWorldHint, so a tester must leave them alone unless
//     told otherwise. Neither does anything but answer.
//   - add_note(text), list_notes(): only with [Options.Notes] (--notes); a store every session
//     shares, written by add_note and read by list_notes (text one note a line, and
//     structuredContent {notes, count}). [Options.LostUpdates] (--lost-updates) makes add_note a
//     read-modify-write without a lock: concurrent adds all answer "added", one survives.
//
// [Options.AllDestructive] (--all-destructive) annotates every tool destructiveHint.
//
// Server-to-client requests travel on the connection over stdio, TCP, WebSocket and HTTP+SSE.
// Over Streamable HTTP the tools/call is answered as an event stream that carries the request;
// the client POSTs its answer to the endpoint with its session id and gets 202.
//
// # Resumable event streams
//
// In a legacy Streamable HTTP session every event-stream answer ([Options.SSEResponses], a
// request with a progressToken, ask and roots) starts with a priming event (an id, retry: 100
// and empty data, as 2025-11-25 servers send), and every event has an id "<stream>-<n>". The
// last [StreamKeepEvents] events of each stream are kept until [StreamTTL] after it ends; a
// GET carrying the session id and Last-Event-ID replays the events after that id and goes on
// with the stream (400 for an unknown id, 409 for a stream being sent elsewhere or events no
// longer kept). [Options.DropSSEAfter] (--drop-sse-after N) cuts every tools/call answer after
// N events and before its response, so a client's resumption path is exercised; the call goes
// on. The stateless era's event streams have no ids and cannot be resumed.
//
// Invalid arguments give a result with isError set (2025-11-25 behaviour); an unknown tool is a
// JSON-RPC error -32602.
//
// # Tasks
//
// [Options.Tasks] turns on the tasks utility of 2025-11-25 (experimental) in sessions that
// negotiate that version: the tasks capability (list, cancel, requests.tools.call), the job
// tool, and tasks/get, tasks/result (which blocks until the task is terminal and carries the
// job's requests to the client, with the related-task _meta), tasks/list (paged like the other
// lists) and tasks/cancel (-32602 for a terminal task). Each session keeps at most [MaxTasks]
// tasks, dropping the oldest terminal one when full; a task lives for the ttl the request asked
// (default [DefaultTaskTTL], at most [MaxTaskTTL]) and its job stops when that passes. Status
// changes go out as notifications/tasks/status where the transport has a channel for them
// (stdio, TCP, WebSocket, HTTP+SSE). Other sessions, and servers without the option, ignore
// params.task and see the usual tool list.
//
// # Failure modes
//
// Failure modes target tools/call only, so the handshake and the listings stay healthy and a
// detector can reach the fault; SlowInitialize is the one exception. See [Options] for each.
//
// # Sloppy modes
//
// The well-behaved server answers a frame that is not UTF-8 or not JSON with -32700 and valid
// JSON that is no request with -32600, and refuses a WebSocket binary frame with close 1003.
// The sloppy modes break rules of the protocol on purpose, for the conformance probe to find:
// [Options.SloppyHTTP] (no Origin, Host or session checks, open CORS, DELETE that keeps the
// session, GET answered with JSON, any MCP-Protocol-Version, binary WebSocket frames served),
// [Options.SloppyJSONRPC] (unknown methods answered with {}, any initialize version agreed to,
// notifications answered), [Options.SloppyStdio] (a banner on stdout, notifications over
// several lines) and [Options.IgnoreCancel]; `mcpspec testserver --sloppy` turns on all four.
// [Options.AnswerVersion] (--answer-version V: every initialize answered with V, whatever was
// offered) breaks the handshake itself; [Options.ReplaceInvalidUTF8] (--replace-invalid-utf8)
// serves a frame that is not UTF-8 with U+FFFD in place of its bad bytes, a lenient receiver
// that breaks no rule, and [Options.CrashOnInvalidUTF8] (--crash-on-invalid-utf8) dies on it.
// [Options.ShapedSessionIDs] (--shaped-session-ids) serves any Streamable HTTP session id of
// its own shape, a forged one or one ended with DELETE.
//
// # Fuzz targets
//
// The protocol fuzzer's targets are the exceptions to that rule, each off by default:
// [Options.CrashOnDepth] (--crash-on-depth N: the parser dies on a frame nested deeper than N),
// [Options.PanicOnWrongType] (--panic-on-wrong-type: a tools/call handler dies on an argument of
// the wrong JSON type), [Options.PanicOnProgressToken] (--panic-on-progress-token with|without:
// a tools/call handler dies with, or without, a progressToken), [Options.MalformedMethod] (--malformed-method M: truncated JSON answers
// to every request of M), [Options.SilentUnknownMethods] (--silent-unknown-methods: unknown
// methods are never answered) and [Options.AcceptInvalid] (--accept-invalid: tools take missing
// or mistyped arguments as zero values). A crash they provoke is a real panic under
// `mcpspec testserver` (exit status 2, a Go stack trace on stderr) and a dropped connection in
// process.
package mcptest
