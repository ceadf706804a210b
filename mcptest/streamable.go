package mcptest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// HTTP header names of the Streamable HTTP transport.
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "MCP-Protocol-Version"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
)

// codeSessionNotFound is the JSON-RPC code of a 404 for an unknown session (the TypeScript
// SDK's choice).
const codeSessionNotFound = -32001

// httpSession is one legacy-era Streamable HTTP session.
type httpSession struct {
	id    string
	state sessionState
	calls inflight

	// ctx ends with the session (DELETE, crash, server close) and cancels its calls and stream.
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex              // guards streamed and streams
	streamed bool                    // a GET stream is attached
	out      chan []byte             // notifications for the GET stream
	streams  map[string]*eventStream // resumable SSE answers, by stream id
	asks     outgoing                // the server's requests awaiting the client's answer
}

func (hs *httpSession) end() { hs.cancel() }

// push queues a notification for the GET stream; it is dropped when no stream is attached or
// the stream is too far behind.
func (hs *httpSession) push(data []byte) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if !hs.streamed {
		return
	}
	select {
	case hs.out <- data:
	default:
	}
}

func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// isSessionShaped reports whether id has the shape of newSessionID's ids.
func isSessionShaped(id string) bool {
	if len(id) != 32 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil && strings.ToLower(id) == id
}

// httpPeer is the peer of one POSTed request.
type httpPeer struct {
	state *sessionState
	sess  *httpSession // nil in the stateless era
	sse   *sseWriter   // the request's own event stream in the stateless era, nil in JSON mode
	// stream is the request's resumable event stream in a legacy session, nil in JSON mode
	stream *eventStream
}

func (p *httpPeer) notify(_ context.Context, method string, params any) error {
	data, err := encodeNotification(method, params)
	if err != nil {
		return err
	}
	switch {
	case p.stream != nil:
		if !p.stream.append(data) && p.sess != nil {
			// The request was answered and its stream ended, but its work goes on (a task's
			// job after the CreateTaskResult): the session's GET stream, if any, carries it.
			p.sess.push(data)
		}
	case p.sse != nil:
		return p.sse.event("message", data)
	case p.sess != nil:
		p.sess.push(data)
	}
	return nil
}

func (p *httpPeer) session() *sessionState { return p.state }

// request sends the client a request on the POST's event stream; the answer arrives as a
// separate POST of the same session.
func (p *httpPeer) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if p.stream == nil || p.sess == nil {
		return nil, errNoChannel
	}
	return p.sess.asks.roundTrip(ctx, method, params, func(data []byte) error {
		if !p.stream.append(data) {
			return errors.New("the request's event stream has ended")
		}
		return nil
	})
}

// needsStream reports whether a legacy-session request must be answered as an event stream
// whatever the options say: a tools/call of a tool that sends the client requests, and
// tasks/result, which carries the requests of a task's job.
func needsStream(req *request) bool {
	if req.Method == "tasks/result" {
		return true // it carries the requests a task's job sends the client
	}
	if req.Method != "tools/call" {
		return false
	}
	var p struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(req.Params, &p)
	return p.Name == "ask" || p.Name == "roots"
}

func (s *Server) handleStreamable(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		s.post(w, r)
	case http.MethodGet:
		s.getStream(w, r)
	case http.MethodDelete:
		s.deleteSession(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// writeJSON writes one JSON body with a status.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, e *rpcError) {
	writeJSON(w, status, errorResponseFor(id, e))
}

// statelessStatus is the HTTP status of a stateless-era answer.
func statelessStatus(resp *response) int {
	if resp.Error == nil {
		return http.StatusOK
	}
	switch resp.Error.Code {
	case CodeMethodNotFound:
		return http.StatusNotFound
	case CodeInvalidParams, CodeUnsupportedVersion, CodeMissingCapability, CodeHeaderMismatch:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

func (s *Server) lookupSession(id string) *httpSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

func (s *Server) dropSession(hs *httpSession) {
	s.mu.Lock()
	delete(s.sessions, hs.id)
	s.mu.Unlock()
	hs.end()
}

func (s *Server) post(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxLineSize+1))
	if err != nil {
		return
	}
	if len(body) > MaxLineSize {
		writeRPCError(w, http.StatusRequestEntityTooLarge, nil, newError(CodeInvalidRequest, "body too large"))
		return
	}
	body, crash := s.Backend.utf8Bug(body)
	if crash {
		s.Backend.die("a frame that is not UTF-8")
		abortConnection(w)
		return
	}
	if s.Backend.tooDeep(body) {
		s.Backend.die("a frame nested deeper than the parser's limit")
		abortConnection(w)
		return
	}
	req, kind, bad := decodeFrame(body)
	switch kind {
	case kindInvalid:
		writeJSON(w, http.StatusBadRequest, bad.encode())
		return
	case kindResponse:
		// an answer to a request the server sent on a legacy session's event stream
		if hs := s.lookupSession(r.Header.Get(HeaderSessionID)); hs != nil {
			hs.asks.deliver(body)
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	era := s.Backend.opts.Era
	modern := era != EraLegacy && (req.Method == "server/discover" || metaOf(req.Params).ProtocolVersion != nil)
	if modern {
		e := checkModernHeaders(r, req)
		if e == nil {
			e = s.Backend.checkParamHeaders(r.Header, req)
		}
		if e != nil {
			writeRPCError(w, http.StatusBadRequest, req.ID, e)
			return
		}
	}
	if modern || era == EraStateless {
		if kind == kindNotification {
			s.Backend.handle(r.Context(), &httpPeer{state: &sessionState{}}, req)
			w.WriteHeader(http.StatusAccepted)
			return
		}
		s.answer(w, r, req, &httpPeer{state: &sessionState{}}, nil, true)
		return
	}

	if v := r.Header.Get(HeaderProtocolVersion); v != "" && !slices.Contains(LegacyVersions(), v) {
		writeRPCError(w, http.StatusBadRequest, req.ID, newError(CodeInvalidRequest, "unsupported %s header %q", HeaderProtocolVersion, v))
		return
	}
	if req.Method == "initialize" && kind == kindRequest {
		hs := &httpSession{id: newSessionID(), out: make(chan []byte, 64)}
		hs.ctx, hs.cancel = context.WithCancel(s.ctx)
		s.mu.Lock()
		s.sessions[hs.id] = hs
		s.mu.Unlock()
		s.Backend.sessions.Add(1)
		w.Header().Set(HeaderSessionID, hs.id)
		if !s.answer(w, r, req, &httpPeer{state: &hs.state, sess: hs}, hs, false) {
			s.dropSession(hs)
		}
		return
	}
	hs, status, e := s.sessionOf(r)
	if e != nil {
		writeRPCError(w, status, req.ID, e)
		return
	}
	if kind == kindNotification {
		if req.Method == "notifications/cancelled" && !s.Backend.opts.IgnoreCancel {
			hs.calls.handleCancelled(req.Params)
		}
		s.Backend.handle(r.Context(), &httpPeer{state: &hs.state, sess: hs}, req)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	s.answer(w, r, req, &httpPeer{state: &hs.state, sess: hs}, hs, false)
}

// sessionOf finds the request's legacy session: 400 when the header is missing, 404 when the
// session is unknown or ended.
func (s *Server) sessionOf(r *http.Request) (*httpSession, int, *rpcError) {
	id := r.Header.Get(HeaderSessionID)
	if id == "" {
		return nil, http.StatusBadRequest, newError(CodeInvalidRequest, "missing %s header: initialize first", HeaderSessionID)
	}
	hs := s.lookupSession(id)
	if hs == nil && s.Backend.opts.ShapedSessionIDs && isSessionShaped(id) {
		hs = s.lookupSession(s.anySession())
	}
	if hs == nil {
		return nil, http.StatusNotFound, newError(codeSessionNotFound, "session not found")
	}
	return hs, 0, nil
}

// checkModernHeaders validates the stateless era's routing headers against the body.
func checkModernHeaders(r *http.Request, req *request) *rpcError {
	if got := r.Header.Get(HeaderMethod); got != req.Method {
		return &rpcError{Code: CodeHeaderMismatch, Message: "Mcp-Method header does not match the body",
			Data: map[string]any{"header": HeaderMethod, "value": got, "body": req.Method}}
	}
	if v := r.Header.Get(HeaderProtocolVersion); v != "" {
		if meta := metaOf(req.Params).ProtocolVersion; meta != nil && *meta != v {
			return &rpcError{Code: CodeHeaderMismatch, Message: "MCP-Protocol-Version header does not match _meta",
				Data: map[string]any{"header": HeaderProtocolVersion, "value": v, "body": *meta}}
		}
	}
	got := r.Header.Get(HeaderName)
	if got == "" {
		return nil
	}
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	_ = json.Unmarshal(req.Params, &p)
	want := p.Name
	if req.Method == "resources/read" {
		want = p.URI
	}
	if got != want {
		return &rpcError{Code: CodeHeaderMismatch, Message: "Mcp-Name header does not match the body",
			Data: map[string]any{"header": HeaderName, "value": got, "body": want}}
	}
	return nil
}

// answer runs one request and writes its answer as JSON or as an event stream. It reports
// whether a successful response was written.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, req *request, p *httpPeer, hs *httpSession, stateless bool) bool {
	ctx := r.Context()
	useSSE := s.Backend.opts.SSEResponses || metaOf(req.Params).ProgressToken != nil
	if hs != nil && !stateless && (useSSE || needsStream(req)) {
		return s.answerStream(w, r, req, p, hs)
	}
	if useSSE {
		p.sse = newSSEWriter(w)
	}
	var entry *inflightEntry
	if hs != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(hs.ctx, cancel) // the session ending cancels its calls
		defer stop()
		entry = hs.calls.add(req.idKey(), cancel)
	}
	resp := s.Backend.handle(ctx, p, req)
	cancelled := hs != nil && hs.calls.remove(req.idKey(), entry)
	switch {
	case cancelled && r.Context().Err() == nil:
		// the client cancelled with notifications/cancelled: end the exchange without an answer
		if p.sse == nil || !p.sse.isStarted() {
			w.WriteHeader(http.StatusNoContent)
		}
		return false
	case resp == nil:
		// a call that was never answered (a hang ended by the session or the server closing)
		// must not turn into an empty 200: drop the connection instead
		abortConnection(w)
		return false
	case resp.abort:
		if hs != nil {
			s.dropSession(hs)
		}
		abortConnection(w)
		return false
	}
	status := http.StatusOK
	if stateless || s.Backend.opts.Era == EraStateless {
		status = statelessStatus(resp)
	}
	data := resp.encode()
	if resp.extra() && p.sse == nil && status == http.StatusOK {
		p.sse = newSSEWriter(w) // several frames need an event stream
	}
	if p.sse != nil && (p.sse.isStarted() || status == http.StatusOK) {
		for _, f := range resp.frames() {
			_ = p.sse.event("message", f)
		}
	} else {
		writeJSON(w, status, data)
	}
	return resp.Error == nil
}

// getStream serves GET: the legacy session's server-to-client event stream.
func (s *Server) getStream(w http.ResponseWriter, r *http.Request) {
	if s.Backend.opts.Era == EraStateless {
		w.Header().Set("Allow", "POST")
		http.Error(w, "no GET stream in the stateless era", http.StatusMethodNotAllowed)
		return
	}
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		http.Error(w, "GET needs Accept: text/event-stream", http.StatusNotAcceptable)
		return
	}
	hs, status, e := s.sessionOf(r)
	if e != nil {
		writeRPCError(w, status, nil, e)
		return
	}
	if lastID := r.Header.Get("Last-Event-ID"); lastID != "" {
		s.resume(w, r, hs, lastID)
		return
	}
	hs.mu.Lock()
	if hs.streamed {
		hs.mu.Unlock()
		http.Error(w, "a GET stream is already open for this session", http.StatusConflict)
		return
	}
	hs.streamed = true
	hs.mu.Unlock()
	defer func() {
		hs.mu.Lock()
		hs.streamed = false
		hs.mu.Unlock()
	}()
	ew := newSSEWriter(w)
	ew.mu.Lock()
	ew.startLocked(nil)
	err := ew.rc.Flush()
	ew.mu.Unlock()
	for err == nil {
		select {
		case data := <-hs.out:
			err = ew.event("message", data)
		case <-hs.ctx.Done():
			return
		case <-r.Context().Done():
			return
		}
	}
}

func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) {
	if s.Backend.opts.Era == EraStateless {
		w.Header().Set("Allow", "POST")
		http.Error(w, "no sessions in the stateless era", http.StatusMethodNotAllowed)
		return
	}
	hs, status, e := s.sessionOf(r)
	if e != nil {
		writeRPCError(w, status, nil, e)
		return
	}
	s.dropSession(hs)
	w.WriteHeader(http.StatusOK)
}
