package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpspec/mcpspec/internal/localguard"
	"github.com/mcpspec/mcpspec/session/recording"
	"github.com/mcpspec/mcpspec/session/transport"
)

// strayBuffer is how many server frames that answer no pending request wait for a reader
// (a request's stream or the GET stream) before the oldest is dropped from the stream; every
// one is recorded all the same.
const strayBuffer = 256

// HTTP serves Streamable HTTP to clients and forwards every message to one upstream
// connection. A request's POST is answered with an event stream (or, when the client accepts
// only JSON, a JSON body) that carries what the server sends while the request is pending —
// progress, logging, its own requests — and then the answer. Notifications and responses get
// 202 Accepted. The upstream's Mcp-Session-Id, when it has one, is passed to the client.
//
// Concurrency: ServeHTTP is called by many goroutines; Close from any, once the server that
// calls ServeHTTP has stopped.
type HTTP struct {
	conn transport.Conn
	o    *Options
	// done is closed when the upstream connection ended (or Close); err is why, set before.
	done chan struct{}
	err  error
	loop sync.WaitGroup

	mu      sync.Mutex // guards pending, order and stray
	pending map[string]*waiter
	order   []*waiter   // pending requests, oldest first: the oldest gets stray frames
	stray   chan []byte // frames for the GET stream when no request is pending
	closeMu sync.Once
}

// waiter is one request's POST waiting for its answer.
type waiter struct {
	key    string
	frames chan []byte // frames sent while the request is pending
	answer chan []byte // the answer, once
}

// NewHTTP starts forwarding to conn, which it owns from now on: [HTTP.Close] closes it.
func NewHTTP(conn transport.Conn, o *Options) *HTTP {
	h := &HTTP{conn: conn, o: o, done: make(chan struct{}), pending: map[string]*waiter{}, stray: make(chan []byte, strayBuffer)}
	h.loop.Add(1)
	go h.recvLoop()
	return h
}

// Done is closed when the upstream connection has ended.
func (h *HTTP) Done() <-chan struct{} { return h.done }

// Err is why the upstream connection ended, once Done is closed.
func (h *HTTP) Err() error {
	select {
	case <-h.done:
		return h.err
	default:
		return nil
	}
}

// Close closes the upstream connection (stopping a child server) and waits for the forwarding
// goroutine.
func (h *HTTP) Close() error {
	var err error
	h.closeMu.Do(func() { err = h.conn.Close() })
	h.loop.Wait()
	return err
}

// envelope is what the proxy reads of a frame.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func peek(frame []byte) (e envelope, ok bool) {
	if json.Unmarshal(frame, &e) != nil {
		return e, false
	}
	return e, true
}

func (h *HTTP) meta() *recording.HTTP {
	if s, ok := h.conn.(transport.Sessioned); ok && s.SessionID() != "" {
		return &recording.HTTP{SessionID: s.SessionID()}
	}
	return nil
}

func (h *HTTP) recvLoop() {
	defer h.loop.Done()
	for {
		f, err := h.conn.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			h.err = err
			close(h.done)
			return
		}
		if f.StreamEnded() {
			continue
		}
		if f.Err != nil {
			_ = h.o.record(recording.ServerToClient, f.Data, h.meta())
			h.o.fault(recording.ServerToClient, f.Err)
			continue
		}
		_ = h.o.record(recording.ServerToClient, f.Data, h.meta())
		if v := recording.InitializeVersion(f.Data); v != "" {
			if vc, ok := h.conn.(transport.Versioned); ok {
				vc.SetProtocolVersion(v)
			}
		}
		h.route(f.Data)
	}
}

// route hands a server frame to the request it answers, or to the oldest pending request, or
// to the GET stream.
func (h *HTTP) route(frame []byte) {
	env, _ := peek(frame)
	h.mu.Lock()
	defer h.mu.Unlock()
	if key := recording.IDKey(env.ID); key != "" && env.Method == "" {
		if w := h.pending[key]; w != nil {
			w.answer <- frame // buffered: one answer per request
			h.removeLocked(w)
			return
		}
	}
	if len(h.order) > 0 {
		select {
		case h.order[0].frames <- frame:
		default: // the client does not read its stream: the frame stays in the recording only
		}
		return
	}
	select {
	case h.stray <- frame:
	default:
		<-h.stray
		h.stray <- frame
	}
}

func (h *HTTP) removeLocked(w *waiter) {
	delete(h.pending, w.key)
	for i, x := range h.order {
		if x == w {
			h.order = append(h.order[:i], h.order[i+1:]...)
			break
		}
	}
}

// ServeHTTP implements Streamable HTTP's POST, GET and DELETE.
func (h *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if origin := r.Header.Get("Origin"); origin != "" && !localguard.LoopbackOrigin(origin) {
		http.Error(w, "proxy: Origin "+origin+" is not a loopback address", http.StatusForbidden)
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		h.get(w, r)
	case http.MethodDelete:
		// The upstream connection outlives one client session: there is nothing to end.
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "proxy: method not allowed", http.StatusMethodNotAllowed)
	}
}

func (h *HTTP) maxFrame() int {
	if h.o != nil && h.o.MaxFrame > 0 {
		return h.o.MaxFrame
	}
	return transport.MaxFrameSize
}

func (h *HTTP) post(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(h.maxFrame())+1))
	if err != nil {
		http.Error(w, "proxy: read request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if len(body) > h.maxFrame() {
		http.Error(w, fmt.Sprintf("proxy: message over %d bytes", h.maxFrame()), http.StatusRequestEntityTooLarge)
		return
	}
	var meta *recording.HTTP
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
		meta = &recording.HTTP{SessionID: sid}
	}
	_ = h.o.record(recording.ClientToServer, body, meta)
	env, ok := peek(body)
	if !ok {
		writeRPCError(w, http.StatusBadRequest, nil, -32700, "parse error: the body is not one JSON-RPC message")
		return
	}
	key := recording.IDKey(env.ID)
	if env.Method == "" || key == "" { // a notification or the client's answer to a server request
		if err := h.conn.Send(r.Context(), body); err != nil {
			h.sendFailed(w, env.ID, err)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	wt := &waiter{key: key, frames: make(chan []byte, strayBuffer), answer: make(chan []byte, 1)}
	h.mu.Lock()
	if h.pending[key] != nil {
		h.mu.Unlock()
		writeRPCError(w, http.StatusConflict, env.ID, -32600, "a request with id "+key+" is already in flight")
		return
	}
	h.pending[key] = wt
	h.order = append(h.order, wt)
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		if h.pending[key] == wt {
			h.removeLocked(wt)
		}
		h.mu.Unlock()
	}()
	if err := h.conn.Send(r.Context(), body); err != nil {
		h.sendFailed(w, env.ID, err)
		return
	}
	h.answer(w, r, wt)
}

// answer streams what the server sends for wt, then its answer.
func (h *HTTP) answer(w http.ResponseWriter, r *http.Request, wt *waiter) {
	if s, ok := h.conn.(transport.Sessioned); ok && s.SessionID() != "" {
		w.Header().Set("Mcp-Session-Id", s.SessionID())
	}
	stream := strings.Contains(r.Header.Get("Accept"), "text/event-stream")
	if !stream {
		select {
		case a := <-wt.answer:
			writeJSON(w, http.StatusOK, a)
		case <-h.done:
			http.Error(w, "proxy: the server ended the connection", http.StatusBadGateway)
		case <-r.Context().Done():
		}
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	send := func(frame []byte) {
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", frame)
		if fl != nil {
			fl.Flush()
		}
	}
	for {
		select {
		case f := <-wt.frames:
			send(f)
		case a := <-wt.answer:
			for len(wt.frames) > 0 { // what came before the answer goes first
				send(<-wt.frames)
			}
			send(a)
			return
		case <-h.done:
			return
		case <-r.Context().Done():
			return
		}
	}
}

// get serves the stream of server frames that answer no pending request.
func (h *HTTP) get(w http.ResponseWriter, r *http.Request) {
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		http.Error(w, "proxy: GET needs Accept: text/event-stream", http.StatusNotAcceptable)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	if fl != nil {
		fl.Flush()
	}
	for {
		select {
		case f := <-h.stray:
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", f)
			if fl != nil {
				fl.Flush()
			}
		case <-h.done:
			return
		case <-r.Context().Done():
			return
		}
	}
}

// sendFailed answers a POST whose message could not be passed upstream: an upstream HTTP
// status is passed through, anything else is 502.
func (h *HTTP) sendFailed(w http.ResponseWriter, id json.RawMessage, err error) {
	var se *transport.StatusError
	if errors.As(err, &se) {
		// The refusal is the server's answer: recorded with its status.
		_ = h.o.record(recording.ServerToClient, se.Body, &recording.HTTP{SessionID: se.SessionID, Status: se.Status})
		if se.ContentType != "" {
			w.Header().Set("Content-Type", se.ContentType)
		}
		w.WriteHeader(se.Status)
		_, _ = w.Write(se.Body)
		return
	}
	writeRPCError(w, http.StatusBadGateway, id, -32603, "proxy: send to server: "+err.Error())
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	writeJSON(w, status, b)
}

// Serve serves h on l until ctx ends or the upstream connection ends, then shuts the server
// down and closes h. It returns the upstream's error, if it ended on one.
func Serve(ctx context.Context, l net.Listener, h *HTTP) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	var err error
	select {
	case <-ctx.Done():
		err = ctx.Err()
	case <-h.Done():
		err = h.Err()
		if err == nil {
			err = ErrUpstreamEnded
		}
	case err = <-errc:
	}
	cerr := h.Close() // first: the streams of pending requests end with the upstream
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	srv.Close()
	if err == nil {
		err = cerr
	}
	return err
}
