package mcptest

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Endpoint paths served by [Server].
const (
	PathStreamable = "/mcp"     // Streamable HTTP
	PathSSE        = "/sse"     // legacy HTTP+SSE: the GET stream
	PathMessage    = "/message" // legacy HTTP+SSE: where messages are POSTed
	PathWebSocket  = "/ws"      // WebSocket, subprotocol "mcp"
)

// closeWait bounds how long Close waits for handlers once every context is cancelled.
const closeWait = 10 * time.Second

// Server is a reference MCP server listening on a loopback HTTP port, serving Streamable HTTP
// at [PathStreamable], legacy HTTP+SSE at [PathSSE] and [PathMessage], and WebSocket at
// [PathWebSocket].
type Server struct {
	// URL is the Streamable HTTP endpoint, e.g. http://127.0.0.1:43211/mcp.
	URL string
	// SSEURL is the legacy HTTP+SSE endpoint, e.g. http://127.0.0.1:43211/sse.
	SSEURL string
	// WSURL is the WebSocket endpoint, e.g. ws://127.0.0.1:43211/ws.
	WSURL string
	// Addr is the listening address, host:port.
	Addr string
	// Backend is the server's state; use it for [Backend.Stats].
	Backend *Backend

	// anyHost turns the Host check off (Options.AllowAnyHost).
	anyHost bool
	// token is the bearer token every request must carry, if not empty (Options.BearerToken).
	token     string
	srv       *http.Server
	ctx       context.Context
	cancel    context.CancelFunc
	serveDone chan struct{}

	mu          sync.Mutex // guards the fields below
	closed      bool
	handlers    sync.WaitGroup // running HTTP handlers; Add only under mu while !closed
	sessions    map[string]*httpSession
	sseSessions map[string]*sseSession

	once sync.Once
}

// NewServer starts a server on 127.0.0.1 at a free port. It panics when it cannot listen or
// opts is invalid, as [net/http/httptest.NewServer] does. Close it when done.
func NewServer(opts *Options) *Server {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("mcptest: listen: %v", err))
	}
	s, err := StartServer(l, opts)
	if err != nil {
		panic(err)
	}
	return s
}

// StartServer serves on an existing listener, which the server then owns.
func StartServer(l net.Listener, opts *Options) (*Server, error) {
	b, err := newBackend(opts)
	if err != nil {
		_ = l.Close()
		return nil, err
	}
	addr := l.Addr().String()
	s := &Server{
		URL:         "http://" + addr + PathStreamable,
		SSEURL:      "http://" + addr + PathSSE,
		WSURL:       "ws://" + addr + PathWebSocket,
		Addr:        addr,
		Backend:     b,
		anyHost:     opts != nil && (opts.AllowAnyHost || opts.SloppyHTTP),
		token:       b.opts.BearerToken,
		serveDone:   make(chan struct{}),
		sessions:    make(map[string]*httpSession),
		sseSessions: make(map[string]*sseSession),
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	mux := http.NewServeMux()
	mux.HandleFunc(PathStreamable, s.handleStreamable)
	mux.HandleFunc(PathSSE, s.handleSSE)
	mux.HandleFunc(PathMessage, s.handleMessage)
	mux.HandleFunc(PathWebSocket, s.handleWebSocket)
	// HTTP/1.1, and HTTP/2 without TLS for a client that starts with its preface (h2c with
	// prior knowledge, as streamable.Dialer's UnencryptedHTTP2 does).
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	s.srv = &http.Server{
		Handler:           s.sloppyHTTP(s.track(mux)),
		BaseContext:       func(net.Listener) context.Context { return s.ctx },
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(b.log.Handler(), slog.LevelWarn),
		Protocols:         &protocols,
	}
	go func() {
		defer close(s.serveDone)
		if err := s.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			b.log.Warn("http serve", "err", err)
		}
	}()
	return s, nil
}

// Stats returns the Backend's counters.
func (s *Server) Stats() Stats { return s.Backend.Stats() }

// track counts running handlers for Close, and rejects a request whose Host does not name this
// server (DNS rebinding) or whose Origin is not loopback (a cross-origin browser request).
func (s *Server) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			http.Error(w, "server closing", http.StatusServiceUnavailable)
			return
		}
		s.handlers.Add(1)
		s.mu.Unlock()
		defer s.handlers.Done()
		if !s.anyHost && !allowedHost(r.Host, s.Addr) {
			http.Error(w, "forbidden host "+r.Host, http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !loopbackOrigin(origin) {
			http.Error(w, "forbidden origin "+origin, http.StatusForbidden)
			return
		}
		if s.token != "" && !bearerOK(r.Header.Get("Authorization"), s.token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcptest"`)
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// allowedHost reports whether a request's Host header names the server bound at addr: localhost,
// 127.0.0.1 or [::1], or the bound host itself, each with the bound port (the port may be left
// out only when it is 80). A server bound to every interface also accepts any IP literal with its
// port: DNS rebinding needs a host name, which an IP literal is not. The MCP specification asks
// servers to validate Host and Origin against DNS rebinding.
func allowedHost(host, addr string) bool {
	boundHost, boundPort, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	h, port, err := net.SplitHostPort(host)
	if err != nil {
		h, port = strings.Trim(host, "[]"), "80"
	}
	if port != boundPort || h == "" {
		return false
	}
	if strings.EqualFold(h, "localhost") || h == "127.0.0.1" || h == "::1" || strings.EqualFold(h, boundHost) {
		return true
	}
	if ip := net.ParseIP(boundHost); ip != nil && ip.IsUnspecified() {
		return net.ParseIP(h) != nil
	}
	return false
}

// bearerOK reports whether an Authorization header value carries token as a bearer token
// (the scheme is case-insensitive; the token is compared in constant time).
func bearerOK(header, token string) bool {
	scheme, got, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) == 1
}

// loopbackOrigin reports whether an Origin header names a loopback host.
func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Close stops the server: it ends every session, stream and hung call, closes every
// connection and waits for every handler.
func (s *Server) Close() {
	s.once.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.cancel()
		s.Backend.Close()
		_ = s.srv.Close()
		<-s.serveDone
		done := make(chan struct{})
		go func() {
			s.handlers.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(closeWait):
			s.Backend.log.Error("mcptest: handlers still running after close")
		}
	})
}

// abortConnection drops the client's connection without a response: the HTTP form of a crash.
func abortConnection(w http.ResponseWriter) {
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		_ = conn.Close()
		return
	}
	panic(http.ErrAbortHandler) // the server's documented way to abort a response it cannot hijack
}

// sseWriter writes server-sent events on one response. Its methods are safe for concurrent use.
type sseWriter struct {
	mu      sync.Mutex // guards the response and started
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
}

func newSSEWriter(w http.ResponseWriter) *sseWriter {
	return &sseWriter{w: w, rc: http.NewResponseController(w)}
}

// start writes the SSE headers once.
func (e *sseWriter) startLocked(header func(http.Header)) {
	if e.started {
		return
	}
	e.started = true
	h := e.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	if header != nil {
		header(h)
	}
	e.w.WriteHeader(http.StatusOK)
}

// event writes one event; data must hold no newline (JSON frames never do).
func (e *sseWriter) event(name string, data []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.startLocked(nil)
	if _, err := fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", name, data); err != nil {
		return err
	}
	return e.rc.Flush()
}

// start writes the SSE headers and flushes them.
func (e *sseWriter) start() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.startLocked(nil)
	return e.rc.Flush()
}

// priming writes the priming event: an id with empty data, and the reconnection delay.
func (e *sseWriter) priming(id string, retryMillis int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.startLocked(nil)
	if _, err := fmt.Fprintf(e.w, "id: %s\nretry: %d\ndata: \n\n", id, retryMillis); err != nil {
		return err
	}
	return e.rc.Flush()
}

// open starts the stream without an event: the headers and an SSE comment, flushed.
func (e *sseWriter) open() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.startLocked(nil)
	if _, err := fmt.Fprint(e.w, ": stream\n\n"); err != nil {
		return err
	}
	return e.rc.Flush()
}

// message writes one "message" event with an id (none when id is ""); data must hold no newline.
func (e *sseWriter) message(id string, data []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.startLocked(nil)
	if id == "" {
		if _, err := fmt.Fprintf(e.w, "event: message\ndata: %s\n\n", data); err != nil {
			return err
		}
		return e.rc.Flush()
	}
	if _, err := fmt.Fprintf(e.w, "id: %s\nevent: message\ndata: %s\n\n", id, data); err != nil {
		return err
	}
	return e.rc.Flush()
}

// isStarted reports whether any byte of the stream was written.
func (e *sseWriter) isStarted() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.started
}
