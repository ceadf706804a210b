package session

import (
	"context"
	"encoding/json"
	"errors"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpspec/mcpspec/session/transport"
)

// Options configures a session. A nil *Options means defaults.
type Options struct {
	// ClientInfo is sent as clientInfo; defaults to {mcpspec, <version>}.
	ClientInfo Implementation
	// ProtocolVersion pins a version ("2025-06-18", "2026-07-28" …); "" detects the era and
	// negotiates the newest version both sides speak.
	ProtocolVersion string
	// AcceptAnyVersion takes an initialize answer whose protocolVersion this client does not
	// speak as if the server had agreed to the version offered, instead of failing the
	// handshake. The conformance probe sets it to record the violation and check the rest;
	// the raw initialize result stays visible to OnFrame.
	AcceptAnyVersion bool
	// RequestTimeout is each request's deadline (default 30s).
	RequestTimeout time.Duration
	// ConnectTimeout bounds dial + era detection + handshake (default 10s).
	ConnectTimeout time.Duration
	// ConnectGrace, when > 0, keeps waiting that much longer past ConnectTimeout for the
	// handshake's answers (era detection's probe window still follows ConnectTimeout alone).
	// A handshake that ends in the grace succeeds: the caller, who timed [Open], tells the
	// user the server is slow to start rather than silent (serverconn fails it so).
	ConnectGrace time.Duration
	// HangThreshold, when > 0, turns on the hang detector: a request unanswered after it is
	// marked hung; an answer within HangGrace more fails as Hang, none at all as Deadlock.
	// A notifications/progress for the request is a sign of life: the threshold then counts
	// from the last one (RequestTimeout still bounds the whole call).
	HangThreshold time.Duration
	// HangGrace is the grace period after HangThreshold (default 2×HangThreshold).
	HangGrace time.Duration
	// Roots answers roots/list; nil answers with an empty list.
	Roots []Root
	// SamplingReply, if set, is the canned result for sampling/createMessage; otherwise the
	// request is answered with a JSON-RPC error.
	SamplingReply json.RawMessage
	// ElicitationReply, if set, is the canned result for elicitation/create (and MRTR input
	// requests of the stateless era); otherwise it is declined with an error.
	ElicitationReply json.RawMessage
	// OnRequest, if set, answers the server's requests (sampling/createMessage,
	// elicitation/create, roots/list, any other method but ping, and the stateless era's MRTR
	// input requests) before the canned replies above: ok false falls through to them. It runs
	// on a goroutine of the session's, or on the calling goroutine for input requests, and must
	// return promptly. Declare the capabilities it answers in Declare.
	OnRequest func(r ServerRequest) (reply ClientReply, ok bool)
	// Declare adds client capabilities to those the canned replies imply.
	Declare ClientCapabilities
	// OnNotification receives every server notification. It runs on the reader goroutine and
	// must not block.
	OnNotification func(Notification)
	// OnFinding receives every frame that could not be routed (unknown id, malformed, duplicate).
	// It runs on the reader goroutine and must not block.
	OnFinding func(Finding)
	// OnFrame, if set, sees every raw frame sent and received (for traces and the fuzzer).
	// It runs on the sending goroutine or the reader goroutine and must not block.
	OnFrame func(dir Direction, f transport.Frame)
	// MaxPages bounds cursor paging of list methods (default 1000).
	MaxPages int

	// probe is how long era detection waits for server/discover before it sends initialize
	// too; zero means min(ConnectTimeout/3, 2s). Unexported: tests shorten it.
	probe time.Duration
}

// Direction says whether a frame went to the server or came from it.
type Direction int

const (
	// Sent frames went from the client to the server.
	Sent Direction = iota
	// Received frames came from the server.
	Received
)

// Defaults applied by [Open] to zero [Options] fields.
const (
	DefaultRequestTimeout = 30 * time.Second
	DefaultConnectTimeout = 10 * time.Second
	DefaultMaxPages       = 1000
	// maxMRTR bounds input_required retries of one call.
	maxMRTR = 8
	// closeWait bounds how long Close waits for the reader and reply goroutines.
	closeWait = 5 * time.Second
)

// ErrClosed is wrapped by the Cancelled failure of calls made after or during Close.
var ErrClosed = errors.New("session: closed")

// ErrIDInUse is wrapped by the failure of [Session.RequestRaw] with an id already pending.
var ErrIDInUse = errors.New("session: request id already pending")

// ErrNotInEra is returned by methods the negotiated protocol era does not have
// (logging/setLevel in the stateless era).
var ErrNotInEra = errors.New("session: method not available in this protocol era")

func (o *Options) withDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.ClientInfo.Name == "" {
		out.ClientInfo = Implementation{Name: "mcpspec", Version: buildVersion()}
	}
	if out.RequestTimeout <= 0 {
		out.RequestTimeout = DefaultRequestTimeout
	}
	if out.ConnectTimeout <= 0 {
		out.ConnectTimeout = DefaultConnectTimeout
	}
	if out.HangThreshold > 0 && out.HangGrace <= 0 {
		out.HangGrace = 2 * out.HangThreshold
	}
	if out.MaxPages <= 0 {
		out.MaxPages = DefaultMaxPages
	}
	return out
}

// handshakeLimit is how long the dial and handshake may take: ConnectTimeout and its grace.
func (o *Options) handshakeLimit() time.Duration {
	return o.ConnectTimeout + max(o.ConnectGrace, 0)
}

func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// Session is one client session with an MCP server over one transport connection.
// All methods are safe for concurrent use.
type Session struct {
	conn transport.Conn
	// headerConn is conn when it sends per-frame headers (Streamable HTTP), else nil.
	headerConn transport.HeaderSender
	dialer     transport.Dialer
	opts       Options
	caps       []byte // the client capabilities object, encoded once

	// nextID issues request ids; they start at 1 and are never reused.
	nextID atomic.Int64

	// mu guards sh: everything the reader and the callers hand over between them.
	mu sync.Mutex
	sh shared

	// state is the negotiated state, replaced whole (never mutated) by a handshake under mu;
	// readers on the hot path load it without locking.
	state atomic.Pointer[negotiated]

	// tools holds what the last complete [Session.ListTools] said about each tool: its
	// Mcp-Param-* bindings (connections with a headerConn only) and its task support; replaced
	// whole, never modified.
	tools atomic.Pointer[toolCache]

	// The locks below serialize operations that wait on the network while held; they guard no
	// state the reader touches.
	//
	// learnMu serializes the one tools/list a tools/call may make to learn which tools must run
	// as tasks, and guards learned, set once it was tried.
	learnMu sync.Mutex
	learned bool
	// reinitMu serializes re-initialization after an HTTP 404 for a lost session.
	reinitMu sync.Mutex

	readerDone chan struct{}
	replies    sync.WaitGroup // goroutines answering server→client requests
	closeOnce  sync.Once
	closeErr   error
}

// shared is the state the reader and the callers share, guarded by [Session.mu].
type shared struct {
	// pending holds the calls awaiting an answer, by request id.
	pending map[int64]*call
	// lingering routes the progress of task-augmented tools/calls answered with a task, by
	// token, until the task ends (see progress.go).
	lingering map[int64]*progressRoute
	// abandoned remembers calls given up, so a late answer is told from a stray one.
	abandoned  abandonedSet
	unroutable []unroutable
	closing    bool
	dead       *Error // how the connection ended; later calls fail with a copy
	// taskWake holds the channels of task-augmented calls waiting to poll, by task id, which a
	// notifications/tasks/status for that task wakes early.
	taskWake map[string]chan struct{}
	// findings is a ring of the last maxFindings findings; findNext is its oldest entry once full.
	findings []Finding
	findNext int
}

// negotiated is what a handshake established.
type negotiated struct {
	era          Era
	version      string
	serverInfo   Implementation
	serverCaps   json.RawMessage
	instructions string
	meta         []byte // stateless era: the `_meta` members every request carries (no braces)
	gen          uint64 // handshake generation, bumped by each initialize
	// toolTasks says the server declared capabilities.tasks.requests.tools.call (legacy era):
	// tools/call may then be augmented with a task.
	toolTasks bool
}

// Open dials d, detects the protocol era (unless opts pins a version), performs the handshake
// and returns a ready session. It fails with a classified *Error.
func Open(ctx context.Context, d transport.Dialer, opts *Options) (*Session, error) {
	o := opts.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, o.handshakeLimit())
	defer cancel()
	s, err := dial(ctx, d, o)
	if err != nil {
		return nil, err
	}
	herr := s.handshake(ctx)
	if herr == nil {
		return s, nil
	}
	_ = s.Close()
	fb, ok := d.(transport.FallbackDialer)
	if !ok || !wantsFallback(herr) {
		return nil, herr
	}
	// Streamable HTTP refused the legacy handshake: try the legacy HTTP+SSE transport.
	s2, err := dial(ctx, fb.Fallback(), o)
	if err != nil {
		return nil, errors.Join(herr, err)
	}
	v := o.ProtocolVersion
	if v == "" || isStateless(v) {
		v = Version20251125
	}
	if err := s2.initialize(ctx, v); err != nil {
		_ = s2.Close()
		return nil, errors.Join(herr, err)
	}
	return s2, nil
}

// dial connects and starts the reader.
func dial(ctx context.Context, d transport.Dialer, o Options) (*Session, error) {
	conn, err := d.Dial(ctx)
	if err != nil {
		e := classifyConnErr(err, nil)
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			e.Category = Timeout
		case errors.Is(err, context.Canceled):
			e.Category = Cancelled
		}
		e.Method, e.Message = "dial", "cannot connect to the server: "+err.Error()
		return nil, e
	}
	s := &Session{
		conn:       conn,
		dialer:     d,
		opts:       o,
		sh:         shared{pending: make(map[int64]*call)},
		readerDone: make(chan struct{}),
	}
	s.headerConn, _ = conn.(transport.HeaderSender)
	s.caps = s.capabilities()
	s.state.Store(&negotiated{})
	go s.readLoop()
	return s, nil
}

// Close ends the session and the connection; it waits for the reader to stop.
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.sh.closing = true
		pend := s.sh.pending
		s.sh.pending = make(map[int64]*call)
		s.mu.Unlock()
		s.failAll(pend, &Error{Category: Cancelled, Message: "session closed", Err: ErrClosed})
		s.closeErr = s.conn.Close()
		t := time.NewTimer(closeWait)
		defer t.Stop()
		select {
		case <-s.readerDone:
		case <-t.C:
			s.closeErr = errors.Join(s.closeErr, errors.New("session: close: reader did not stop within "+closeWait.String()))
			return
		}
		replies := make(chan struct{})
		go func() { s.replies.Wait(); close(replies) }()
		select {
		case <-replies:
		case <-t.C:
			s.closeErr = errors.Join(s.closeErr, errors.New("session: close: replies to server requests did not finish within "+closeWait.String()))
		}
	})
	return s.closeErr
}

// Era reports the detected or pinned protocol era.
func (s *Session) Era() Era {
	return s.state.Load().era
}

// ProtocolVersion is the negotiated protocol version.
func (s *Session) ProtocolVersion() string {
	return s.state.Load().version
}

// ServerInfo is the server's self-description (serverInfo).
func (s *Session) ServerInfo() Implementation {
	return s.state.Load().serverInfo
}

// ServerCapabilities is the raw capabilities object the server declared.
func (s *Session) ServerCapabilities() json.RawMessage {
	return s.state.Load().serverCaps
}

// Instructions is the server's instructions string, if any.
func (s *Session) Instructions() string {
	return s.state.Load().instructions
}

// Conn is the underlying transport connection (for PID, stderr, raw sends).
func (s *Session) Conn() transport.Conn { return s.conn }

// Findings returns what the session could not route so far (the last 1000), oldest first.
func (s *Session) Findings() []Finding {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.sh.findings) < maxFindings {
		return append([]Finding(nil), s.sh.findings...)
	}
	out := make([]Finding, 0, maxFindings)
	out = append(out, s.sh.findings[s.sh.findNext:]...)
	return append(out, s.sh.findings[:s.sh.findNext]...)
}

// finding records f and hands it to OnFinding.
func (s *Session) finding(f Finding) {
	if len(f.Frame) > transport.ExcerptSize {
		f.Frame = f.Frame[:transport.ExcerptSize]
	}
	s.mu.Lock()
	if len(s.sh.findings) < maxFindings {
		s.sh.findings = append(s.sh.findings, f)
	} else {
		s.sh.findings[s.sh.findNext] = f
		s.sh.findNext = (s.sh.findNext + 1) % maxFindings
	}
	s.mu.Unlock()
	if s.opts.OnFinding != nil {
		s.opts.OnFinding(f)
	}
}
