package mcptest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"
)

// Exit codes of [RunCommand], matching mcpspec's (see the README's exit codes).
const (
	ExitOK      = 0 // served until stdin closed or ctx ended
	ExitCrashed = 1 // a simulated crash ended the server
	ExitRuntime = 2 // the server failed (cannot listen, write error)
	ExitConfig  = 3 // bad flags
)

// cmdFlags are [RunCommand]'s flags: the [Options] fields and the command's own.
type cmdFlags struct {
	o                            Options
	transport, addr, era         *string
	allowRemote, verbose, sloppy *bool
	// crashLinger and crashExit shape how a simulated crash ends the stdio command.
	crashLinger *time.Duration
	crashExit   *int
}

// newFlagSet defines [RunCommand]'s flags on a new flag set that reports nothing itself.
func newFlagSet() (*flag.FlagSet, *cmdFlags) {
	c := &cmdFlags{}
	o := &c.o
	fs := flag.NewFlagSet("testserver", flag.ContinueOnError)
	// A mistake gets one line and a pointer to -h: the full flag list after it would push the
	// error out of the few stderr lines a client quotes when the server exits.
	fs.SetOutput(io.Discard)
	c.transport = fs.String("transport", "stdio", "transport: stdio, http, sse, ws or tcp")
	c.addr = fs.String("addr", "127.0.0.1:0", "listen address for network transports")
	c.era = fs.String("era", "", "protocol era: legacy, stateless or both (default both, but legacy with --tasks)")
	c.allowRemote = fs.Bool("allow-remote", false, "allow a non-loopback --addr")
	c.verbose = fs.Bool("verbose", false, "log debug diagnostics to stderr")
	fs.BoolVar(&o.HangFirstCall, "hang-first-call", false, "never answer the first tools/call (lazy-init deadlock)")
	fs.BoolVar(&o.HangWhenConcurrent, "hang-when-concurrent", false, "deadlock once two tools/calls overlap")
	fs.Float64Var(&o.CrashRate, "crash-rate", 0, "fraction of tools/calls on which the server crashes (exit 1)")
	fs.StringVar(&o.Seed, "seed", "", "seed for --crash-rate")
	c.crashLinger = fs.Duration("crash-linger", 0, "stdio: after a simulated crash has closed stdin and stdout, live on for `D` before exiting (a dead server that a loaded machine has not reaped yet)")
	c.crashExit = fs.Int("crash-exit", ExitCrashed, "stdio: the exit status of a simulated crash (0: the server shuts down in order mid-run)")
	fs.IntVar(&o.LeakKBPerCall, "leak-kb", 0, "KiB allocated and retained per tools/call")
	fs.IntVar(&o.MalformedEvery, "malformed-every", 0, "write every Nth tools/call response as truncated JSON")
	fs.DurationVar(&o.Delay.Fixed, "delay", 0, "delay every tools/call answer by D")
	fs.DurationVar(&o.Delay.Uniform, "delay-uniform", 0, "add a uniform random delay in [0, D) to every tools/call (reproducible with --seed)")
	fs.DurationVar(&o.Delay.ExpMean, "delay-exp", 0, "add an exponential random delay of mean D to every tools/call (reproducible with --seed)")
	fs.DurationVar(&o.Stall.After, "stall-after", 0, "with --stall-for: stall this long after the first tools/call")
	fs.DurationVar(&o.Stall.For, "stall-for", 0, "stop answering tools/call for D (calls wait until the stall ends)")
	fs.DurationVar(&o.Stall.Every, "stall-every", 0, "with --stall-for: stall again every D (default: once)")
	fs.DurationVar(&o.SlowInitialize, "slow-initialize", 0, "start slowly: answer initialize and server/discover only `D` after the first of them")
	fs.BoolVar(&o.ErrorCycle, "error-cycle", false, "answer tools/call with errors cycling -32601, -32602, -32603, -32000")
	fs.BoolVar(&o.Divergent, "divergent", false, "give concurrent identical tools/calls different answers")
	fs.BoolVar(&o.Serialize, "serialize", false, "handle tools/calls one at a time (head-of-line blocking)")
	fs.BoolVar(&o.SerializeSession, "serialize-session", false, "handle each session's tools/calls one at a time; other sessions go past")
	fs.IntVar(&o.Workers, "workers", 0, "run at most `N` tools/calls at once, the others wait (a worker pool too small)")
	fs.DurationVar(&o.LazyInitDeadlock, "lazy-init-deadlock", 0, "the first tools/call initializes for `D`; a tools/call arriving meanwhile deadlocks with it (only concurrency shows it)")
	fs.BoolVar(&o.CrossTalk, "cross-talk", false, "overlapping tools/calls answer with another call's text (a shared buffer)")
	fs.BoolVar(&o.TimeTool, "time-tool", false, "add the tool time, whose answer is the current time (different by design)")
	fs.BoolVar(&o.Notes, "notes", false, "add the tools add_note (writes to a shared store) and list_notes (reads it)")
	fs.BoolVar(&o.LostUpdates, "lost-updates", false, "add the notes tools, add_note a read-modify-write without a lock: concurrent adds are lost")
	fs.BoolVar(&o.AllDestructive, "all-destructive", false, "annotate every tool destructiveHint")
	fs.BoolVar(&o.HostileText, "hostile-text", false, "add the tools hostile (terminal escapes and Markdown links in its title, description and error) and leak{{env.DB_URL}} (an echo whose name is a template)")
	fs.BoolVar(&o.HostileHTML, "hostile-html", false, "add tools and a resource whose names, descriptions, schemas, errors and contents carry HTML, script, javascript: links and SVG (for testing web UIs)")
	fs.BoolVar(&o.HintedTools, "hinted-tools", false, "add delete_notes (annotated destructiveHint) and fetch_url (openWorldHint); both do nothing")
	fs.BoolVar(&o.WrongID, "wrong-id", false, "answer tools/call with an id off by 1000")
	fs.BoolVar(&o.BothResultAndError, "both-result-and-error", false, "answer tools/call with both result and error")
	fs.BoolVar(&o.DuplicateAnswers, "duplicate-answers", false, "send every tools/call response twice")
	fs.BoolVar(&o.StrayAnswer, "stray-answer", false, "send a response to an id never issued before every tools/call response")
	fs.IntVar(&o.PageSize, "page-size", 0, "page tools/resources/prompts lists by N entries")
	fs.BoolVar(&o.SSEResponses, "sse-responses", false, "answer Streamable HTTP requests as text/event-stream (legacy sessions: resumable with GET + Last-Event-ID)")
	fs.BoolVar(&o.ParamHeaders, "param-headers", false, "add the tool route, whose x-mcp-header arguments a stateless Streamable HTTP tools/call must mirror in Mcp-Param-* headers (else 400, -32020)")
	fs.BoolVar(&o.Tasks, "tasks", false, "turn on tasks (2025-11-25, experimental): the tasks capability, the job tool (taskSupport required), slow as taskSupport optional, tasks/get|result|list|cancel; tasks exist only in 2025-11-25 sessions, so without --era this serves the legacy era only (--era both keeps the stateless era, where a client that detects 2026-07-28 sees no tasks)")
	fs.BoolVar(&o.AllowAnyHost, "allow-any-host", false, "network transports: accept any Host header (by default a Host other than localhost, 127.0.0.1, [::1] or the bound address is refused with 403, as DNS-rebinding defence asks)")
	fs.StringVar(&o.BearerToken, "bearer-token", "", "network transports: answer 401 (WWW-Authenticate: Bearer) to a request without the header Authorization: Bearer `TOKEN`")
	fs.BoolVar(&o.SloppyHTTP, "sloppy-http", false, "break the HTTP transports' rules: no Origin/Host check, CORS for every origin, no session checks, DELETE keeps the session, GET answers JSON, any MCP-Protocol-Version, WebSocket binary frames served")
	fs.BoolVar(&o.SloppyJSONRPC, "sloppy-jsonrpc", false, "break JSON-RPC rules: unknown methods answered with {}, any initialize version agreed to, notifications answered")
	fs.BoolVar(&o.SloppyStdio, "sloppy-stdio", false, "break stdio framing: a banner line on stdout, notifications written over several lines (stdio, tcp)")
	fs.StringVar(&o.AnswerVersion, "answer-version", "", "answer every initialize with protocolVersion `V`, whatever the client offered (1999-01-01 breaks the handshake)")
	fs.BoolVar(&o.ReplaceInvalidUTF8, "replace-invalid-utf8", false, "serve a frame that is not UTF-8 with its bad bytes replaced by U+FFFD instead of answering -32700")
	fs.BoolVar(&o.CrashOnInvalidUTF8, "crash-on-invalid-utf8", false, "fuzz target: panic on a frame that is not UTF-8")
	fs.BoolVar(&o.ShapedSessionIDs, "shaped-session-ids", false, "Streamable HTTP: serve an unknown session id that has the shape of the server's own (32 hex digits) in a live session (a forged id is accepted)")
	fs.BoolVar(&o.IgnoreCancel, "ignore-cancel", false, "ignore notifications/cancelled: cancelled calls are still answered")
	c.sloppy = fs.Bool("sloppy", false, "all of --sloppy-http, --sloppy-jsonrpc, --sloppy-stdio and --ignore-cancel")
	fs.BoolVar(&o.NoEventStore, "no-event-store", false, "send SSE answers without event ids (no resumption): with --drop-sse-after, answers are lost")
	fs.IntVar(&o.DropSSEAfter, "drop-sse-after", 0, "cut every legacy Streamable HTTP SSE answer to a tools/call after N events, before its response, so the client must resume with Last-Event-ID")
	fs.IntVar(&o.CrashOnDepth, "crash-on-depth", 0, "fuzz target: panic on a frame nested deeper than N arrays/objects")
	fs.BoolVar(&o.PanicOnWrongType, "panic-on-wrong-type", false, "fuzz target: panic when a tools/call argument has the wrong JSON type")
	fs.StringVar(&o.PanicOnProgressToken, "panic-on-progress-token", "", "fuzz target: panic on a tools/call `with` or `without` a progressToken in params._meta")
	fs.StringVar(&o.MalformedMethod, "malformed-method", "", "fuzz target: answer every request of `METHOD` with truncated JSON")
	fs.BoolVar(&o.SilentUnknownMethods, "silent-unknown-methods", false, "fuzz target: never answer requests for unknown methods")
	fs.BoolVar(&o.AcceptInvalid, "accept-invalid", false, "fuzz target: tools take missing or wrong-typed arguments as zero values")
	return fs, c
}

// CommandFlags returns the flags [RunCommand] takes, for a help renderer (mcpspec lists them in
// its own help layout). Parsing it changes nothing.
func CommandFlags() *flag.FlagSet {
	fs, _ := newFlagSet()
	return fs
}

// RunCommand is the `mcpspec testserver` verb. It parses args (flags only, no globals), then:
//
//   - --transport stdio (default): serves stdin/stdout and returns when stdin closes;
//   - --transport http|sse|ws: listens on --addr (every HTTP endpoint is served; the transport
//     only picks which URL is printed) and prints that URL as the first stdout line, e.g.
//     http://127.0.0.1:43211/mcp, http://127.0.0.1:43211/sse, ws://127.0.0.1:43211/ws;
//   - --transport tcp: newline-delimited JSON-RPC over TCP, printing tcp://127.0.0.1:43211.
//
// Network transports serve until ctx ends. A simulated crash (--crash-rate) ends the command
// with [ExitCrashed] at once; over stdio, --crash-linger delays that exit after the pipes are
// closed and --crash-exit changes its status. Diagnostics go to stderr. A non-loopback --addr is refused unless
// --allow-remote is given.
func RunCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs, c := newFlagSet()
	transport, addr, era, allowRemote, verbose, sloppy := c.transport, c.addr, c.era, c.allowRemote, c.verbose, c.sloppy
	o := &c.o
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fmt.Fprintln(stderr, "Usage of testserver:")
			fs.PrintDefaults()
			return ExitOK
		}
		fmt.Fprintf(stderr, "testserver: %v (run 'mcpspec testserver -h' for the flags)\n", err)
		return ExitConfig
	}
	if *sloppy {
		o.SloppyHTTP, o.SloppyJSONRPC, o.SloppyStdio, o.IgnoreCancel = true, true, true, true
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "testserver: unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return ExitConfig
	}
	switch *era {
	case "":
		// Tasks are a 2025-11-25 feature: serving both eras, a client that detects the era
		// (mcpspec does) would speak 2026-07-28 and never see them.
		o.Era = EraBoth
		if o.Tasks {
			o.Era = EraLegacy
		}
	case "both":
		o.Era = EraBoth
	case "legacy", "stateless":
		o.Era = Era(*era)
	default:
		fmt.Fprintf(stderr, "testserver: --era must be legacy, stateless or both, not %q\n", *era)
		return ExitConfig
	}
	if o.Tasks && o.Era == EraStateless {
		fmt.Fprintln(stderr, "testserver: --tasks needs 2025-11-25 sessions, which --era stateless does not serve (drop --era, or use --era legacy)")
		return ExitConfig
	}
	if err := o.validate(); err != nil {
		fmt.Fprintf(stderr, "testserver: %v\n", err)
		return ExitConfig
	}
	// A crash the fuzz modes provoke is a real one in the command: a panic, exit status 2.
	o.panics = true
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	o.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	switch *transport {
	case "stdio":
		err := ServeStdio(ctx, stdin, stdout, o)
		if !errors.Is(err, ErrCrashed) {
			return exitCode(stderr, err)
		}
		if *c.crashLinger > 0 {
			t := time.NewTimer(*c.crashLinger)
			select {
			case <-t.C:
			case <-ctx.Done():
			}
			t.Stop()
		}
		if *c.crashExit != ExitCrashed {
			fmt.Fprintln(stderr, "testserver: simulated crash, exit", *c.crashExit)
			return *c.crashExit
		}
		return exitCode(stderr, err)
	case "http", "sse", "ws", "tcp":
	default:
		fmt.Fprintf(stderr, "testserver: --transport must be stdio, http, sse, ws or tcp, not %q\n", *transport)
		return ExitConfig
	}
	if err := checkLoopback(*addr, *allowRemote); err != nil {
		fmt.Fprintf(stderr, "testserver: %v\n", err)
		return ExitConfig
	}
	return serveNetwork(ctx, *transport, *addr, o, stdout, stderr)
}

// serveNetwork runs a network transport until ctx ends or a crash.
func serveNetwork(ctx context.Context, transport, addr string, o *Options, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu      sync.Mutex // guards crashed
		crashed bool
	)
	o.Crash = func() {
		mu.Lock()
		crashed = true
		mu.Unlock()
		cancel()
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(stderr, "testserver: listen %s: %v\n", addr, err)
		return ExitRuntime
	}
	var (
		url  string
		stop func()
	)
	if transport == "tcp" {
		s, err := StartTCPServer(l, o)
		if err != nil {
			fmt.Fprintf(stderr, "testserver: %v\n", err)
			return ExitConfig
		}
		url, stop = s.URL(), s.Close
	} else {
		s, err := StartServer(l, o)
		if err != nil {
			fmt.Fprintf(stderr, "testserver: %v\n", err)
			return ExitConfig
		}
		stop = s.Close
		switch transport {
		case "http":
			url = s.URL
		case "sse":
			url = s.SSEURL
		default:
			url = s.WSURL
		}
	}
	if _, err := fmt.Fprintln(stdout, url); err != nil {
		stop()
		return ExitRuntime
	}
	<-ctx.Done()
	stop()
	mu.Lock()
	defer mu.Unlock()
	if crashed {
		return ExitCrashed
	}
	return ExitOK
}

func exitCode(stderr io.Writer, err error) int {
	switch {
	case err == nil, errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return ExitOK
	case errors.Is(err, ErrCrashed):
		fmt.Fprintln(stderr, "testserver: simulated crash")
		return ExitCrashed
	default:
		fmt.Fprintf(stderr, "testserver: %v\n", err)
		return ExitRuntime
	}
}

// checkLoopback refuses a listen address off the loopback interface unless allowed.
func checkLoopback(addr string, allowRemote bool) error {
	if allowRemote {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", addr, err)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--addr %q is not a loopback address (pass --allow-remote to listen on it)", addr)
}
