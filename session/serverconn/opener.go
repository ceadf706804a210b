package serverconn

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/spec"
	"github.com/mcpspec/mcpspec/session/transport/sse"
	"github.com/mcpspec/mcpspec/session/transport/streamable"
)

// DialFunc returns the dialer of one session; stderrPath is the file a child process's stderr
// goes to ("" keeps only an in-memory tail).
type DialFunc func(stderrPath string) (transport.Dialer, error)

// Options describes one server and how to open its sessions.
type Options struct {
	// Name names the server in messages (`server "db"`); "" says "the server".
	Name string
	// Info is what the server's SPEC resolved to: its transport, URL or command line. Messages
	// name the server by it.
	Info spec.Info
	// Dial builds the dialer of each session. Required; [SpecDial] makes one from a SPEC.
	Dial DialFunc
	// Session is every session's options. ProtocolVersion "" detects the era on the first
	// session; later sessions pin what it negotiated. OnFinding is called too.
	Session session.Options
	// StderrFile names the stderr file of session n (counting from 1) of a child process; nil
	// or "" keeps only the in-memory tail.
	StderrFile func(n int) string
	// Wait, if set, is called before each dial (a rate limit); its error aborts the open.
	Wait func(ctx context.Context) error
	// Terms names the user's settings in hints; zero fields take [CLITerms]' values.
	Terms Terms
	// Inbox gives every session an [Inbox] recording its notifications and server requests
	// (Session.OnNotification and OnRequest are still called after it).
	Inbox bool
}

// Opener opens sessions to one server. It is safe for concurrent use.
type Opener struct {
	o Options

	opened atomic.Int64 // sessions started so far, for stderr file names

	mu sync.Mutex // guards the fields below
	// negotiated is the version the first session settled on ("" until then).
	negotiated string
	// first is closed when the first open ended; firstErr is its failure, if any.
	first    chan struct{}
	started  bool
	firstErr error
}

// Conn is one open session, with the child process behind it, if any.
type Conn struct {
	*session.Session
	// N counts the sessions of the opener, from 1.
	N int
	// Process is the child process (stdio), or nil.
	Process transport.Process
	// StderrPath is the file holding the child's stderr, or "".
	StderrPath string
	// Transport is the transport the session runs on: for an http(s) SPEC (spec.Auto),
	// spec.HTTP or spec.SSE, whichever the handshake settled on.
	Transport spec.Transport
	// Findings collects what the server sent on this session that answered no request.
	Findings *Findings
	// Inbox records the session's notifications and server requests and answers the latter
	// (nil unless [Options].Inbox).
	Inbox *Inbox

	op *Opener
}

// New returns an opener for the server o describes.
func New(o Options) *Opener {
	o.Terms = o.Terms.withDefaults()
	return &Opener{o: o, first: make(chan struct{})}
}

// Info returns what the server's SPEC resolved to.
func (op *Opener) Info() spec.Info { return op.o.Info }

// Name returns the server's name ("" when it has none).
func (op *Opener) Name() string { return op.o.Name }

// Negotiated returns the protocol version the first session settled on, or "".
func (op *Opener) Negotiated() string {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.negotiated
}

// Open dials the server and performs the handshake within the session's ConnectTimeout (and
// ctx). While the first session of the opener is being opened, later calls wait for it, so
// they pin its version instead of all detecting the era; when the first failed (not by an
// interruption), every later call returns that failure at once: a server that cannot start is
// started once. A failure is an [*Error] with a category and a hint.
func (op *Opener) Open(ctx context.Context) (*Conn, error) {
	return op.OpenWith(ctx, nil)
}

// OpenWith is [Opener.Open] with session options of its own: adjust, when not nil, changes a
// copy of the opener's (a detector turns on the hang detector for its sessions this way). The
// session still pins the version the first session negotiated, unless adjust pins another.
func (op *Opener) OpenWith(ctx context.Context, adjust func(*session.Options)) (*Conn, error) {
	op.mu.Lock()
	isFirst := !op.started
	op.started = true
	op.mu.Unlock()
	if !isFirst {
		select {
		case <-op.first:
			op.mu.Lock()
			err := op.firstErr
			op.mu.Unlock()
			if err != nil && op.Negotiated() == "" {
				return nil, err
			}
		case <-ctx.Done():
			return nil, op.interrupted("before connecting")
		}
	}
	c, err := op.open(ctx, adjust)
	if isFirst {
		op.mu.Lock()
		if ctx.Err() == nil {
			// An interrupted first open says nothing about the server.
			op.firstErr = err
		}
		op.mu.Unlock()
		close(op.first)
	}
	return c, err
}

// interrupted is the failure of an open given up because ctx ended.
func (op *Opener) interrupted(when string) *Error {
	return &Error{Category: session.Cancelled, Op: "the handshake", Msg: "interrupted " + when, Err: context.Canceled}
}

func (op *Opener) open(ctx context.Context, adjust func(*session.Options)) (*Conn, error) {
	n := int(op.opened.Add(1))
	stderrPath := ""
	if op.o.StderrFile != nil {
		stderrPath = op.o.StderrFile(n)
	}
	d, err := op.o.Dial(stderrPath)
	if err != nil {
		return nil, op.configError(err)
	}
	if op.o.Wait != nil {
		if err := op.o.Wait(ctx); err != nil {
			return nil, op.interrupted("before connecting")
		}
	}
	so := op.o.Session
	if so.ProtocolVersion == "" {
		so.ProtocolVersion = op.Negotiated()
	}
	if adjust != nil {
		adjust(&so)
	}
	// The handshake is bounded by ctx's deadline too: name the limit that applied.
	limit, byCaller := so.ConnectTimeout, false
	if limit <= 0 {
		limit = session.DefaultConnectTimeout
	}
	if dl, ok := ctx.Deadline(); ok {
		if rem := time.Until(dl); rem < limit {
			limit, byCaller = (rem + 99*time.Millisecond).Truncate(100*time.Millisecond), true
		}
	}
	if !byCaller {
		// Past the connect limit, wait a bounded while longer, to tell a slow start (the
		// answer comes) from a server that is silent.
		so.ConnectTimeout, so.ConnectGrace = limit, slowStartGrace(limit, so.RequestTimeout)
	}
	// The first malformed frame often explains a failed handshake (logging on stdout).
	var firstBad atomic.Pointer[session.Finding]
	findings := &Findings{}
	next := so.OnFinding
	so.OnFinding = func(f session.Finding) {
		findings.add(f)
		if f.Category == session.Malformed {
			firstBad.CompareAndSwap(nil, &f)
		}
		if next != nil {
			next(f)
		}
	}
	var inbox *Inbox
	if op.o.Inbox {
		inbox = newInbox()
		nextNote, nextReq := so.OnNotification, so.OnRequest
		so.OnNotification = func(n session.Notification) {
			inbox.notification(n)
			if nextNote != nil {
				nextNote(n)
			}
		}
		so.OnRequest = func(r session.ServerRequest) (session.ClientReply, bool) {
			if rep, ok := inbox.request(r); ok {
				return rep, true
			}
			if nextReq != nil {
				return nextReq(r)
			}
			return session.ClientReply{}, false
		}
	}
	start := time.Now()
	s, err := session.Open(ctx, d, &so)
	if err != nil {
		var bad []byte
		if f := firstBad.Load(); f != nil {
			bad = f.Frame
		}
		return nil, op.connectError(ctx, err, limit, so.ConnectGrace, byCaller, bad, stderrPath)
	}
	if took := time.Since(start); took > limit {
		return nil, op.slowStart(ctx, s, took, limit, stderrPath)
	}
	c := &Conn{Session: s, N: n, StderrPath: stderrPath, Transport: settled(op.o.Info.Transport, s.Conn()), Findings: findings, Inbox: inbox, op: op}
	if proc, ok := s.Conn().(transport.Process); ok {
		c.Process = proc
		if p := proc.StderrPath(); p != "" {
			c.StderrPath = p
		}
	}
	op.mu.Lock()
	if op.negotiated == "" {
		op.negotiated = s.ProtocolVersion()
	}
	op.mu.Unlock()
	return c, nil
}

// settled names the transport of conn, resolving spec.Auto by the connection the session
// kept: Streamable HTTP, or the legacy HTTP+SSE it fell back to.
func settled(t spec.Transport, conn transport.Conn) spec.Transport {
	if t != spec.Auto {
		return t
	}
	switch conn.(type) {
	case *sse.Conn:
		return spec.SSE
	case *streamable.Conn:
		return spec.HTTP
	}
	return t
}

// configError describes a server definition the dialer refused.
func (op *Opener) configError(err error) *Error {
	e := &Error{Op: "the server definition", Msg: err.Error(), Err: err}
	var se *spec.Error
	if errors.As(err, &se) {
		e.hint = se.Hint
	}
	return e
}

// SpecDial returns a [DialFunc] for a SPEC (a command line, "testserver [flags]", or a URL)
// resolved with so, and what it resolved to. A SPEC that does not parse is a *spec.Error.
func SpecDial(s string, so *spec.Options) (DialFunc, spec.Info, error) {
	var base spec.Options
	if so != nil {
		base = *so
	}
	_, info, err := spec.Parse(s, &base)
	if err != nil {
		return nil, info, err
	}
	return func(stderrPath string) (transport.Dialer, error) {
		o := base
		if stderrPath != "" {
			o.StderrPath = stderrPath
		}
		d, _, err := spec.Parse(s, &o)
		if err != nil {
			return nil, fmt.Errorf("server %s: %w", s, err)
		}
		return d, nil
	}, info, nil
}

// Options returns the options the opener was made with (the load engine opens fresh openers
// from them for cold starts).
func (op *Opener) Options() Options { return op.o }
