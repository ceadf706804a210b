package mcptest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
)

// sseSession is one legacy HTTP+SSE session: the GET stream carries every answer, POSTs to
// PathMessage?sessionId=… carry every client message.
type sseSession struct {
	in     chan []byte   // POSTed frames, in order
	closed chan struct{} // closed when the GET stream ends
	once   sync.Once
}

func (ss *sseSession) close() { ss.once.Do(func() { close(ss.closed) }) }

// sseReader reads POSTed frames for the connection loop.
type sseReader struct {
	ctx context.Context
	ss  *sseSession
}

func (r *sseReader) readFrame() ([]byte, error) {
	select {
	case data := <-r.ss.in:
		return data, nil
	case <-r.ss.closed:
		return nil, io.EOF
	case <-r.ctx.Done():
		return nil, io.EOF
	}
}

// sseFrameWriter writes each frame as an event named "message".
type sseFrameWriter struct{ ew *sseWriter }

func (w sseFrameWriter) writeFrame(data []byte) error { return w.ew.event("message", data) }

// handleSSE serves GET PathSSE: the endpoint event, then every answer of the session.
func (s *Server) handleSSE(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		http.Error(w, "GET the event stream; POST messages to the endpoint it names", http.StatusMethodNotAllowed)
		return
	}
	if s.Backend.opts.Era == EraStateless {
		http.Error(w, "HTTP+SSE is a legacy-era transport", http.StatusNotFound)
		return
	}
	id := newSessionID()
	ss := &sseSession{in: make(chan []byte), closed: make(chan struct{})}
	s.mu.Lock()
	s.sseSessions[id] = ss
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.sseSessions, id)
		s.mu.Unlock()
	}()

	ew := newSSEWriter(w)
	if err := ew.event("endpoint", []byte(PathMessage+"?sessionId="+id)); err != nil {
		return
	}
	err := s.Backend.serveFrames(r.Context(), &sseReader{ctx: r.Context(), ss: ss}, sseFrameWriter{ew}, func(bool) { ss.close() }, readerWait)
	if errors.Is(err, ErrCrashed) {
		abortConnection(w)
	}
}

// handleMessage serves POST PathMessage?sessionId=…: 202, the answer arriving on the stream.
func (s *Server) handleMessage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	id := r.URL.Query().Get("sessionId")
	if id == "" {
		http.Error(w, "missing sessionId", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	ss := s.sseSessions[id]
	s.mu.Unlock()
	if ss == nil {
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxLineSize+1))
	if err != nil {
		return
	}
	if len(body) > MaxLineSize {
		http.Error(w, "message too large", http.StatusRequestEntityTooLarge)
		return
	}
	select {
	case ss.in <- body:
		w.WriteHeader(http.StatusAccepted)
	case <-ss.closed:
		http.Error(w, "session ended", http.StatusNotFound)
	case <-r.Context().Done():
	}
}
