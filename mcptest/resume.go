package mcptest

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Resumable event streams of the legacy era's Streamable HTTP: every SSE answer to a POST gets
// an id, its events are numbered "<streamID>-<n>" (n from 0, the priming event), the last
// StreamKeepEvents events stay in memory, and a GET carrying Last-Event-ID replays the events
// after that id and goes on with the stream.
const (
	// StreamKeepEvents is how many of a stream's latest events are kept for resumption.
	StreamKeepEvents = 64
	// StreamTTL is how long a finished stream stays resumable.
	StreamTTL = time.Minute
	// RetryMillis is the reconnection delay the priming event asks for with retry:.
	RetryMillis = 100
	// maxFinishedStreams bounds the finished streams one session keeps.
	maxFinishedStreams = 256
)

// streamEvent is one numbered message event.
type streamEvent struct {
	seq  int
	data []byte
}

// eventStream is one resumable SSE answer of a legacy session. Producers (the call and its
// notifications and requests) append; one writer at a time (the POST, then a resuming GET)
// sends.
type eventStream struct {
	id string

	mu       sync.Mutex // guards the fields below
	events   []streamEvent
	seq      int           // seq of the last event appended (0: only the priming event)
	changed  chan struct{} // closed and replaced whenever an event is appended or the stream ends
	ended    bool          // nothing more will be appended
	abort    bool          // ended without an answer that must be written: drop the connection
	final    int           // seq of the answer (0 when the stream ended without one)
	endedAt  time.Time
	attached bool // a writer is sending the stream
	noIDs    bool // Options.NoEventStore: events carry no id, so the stream cannot be resumed
	detached bool // the server cut the POST on purpose: its disconnect must not cancel the call
}

func newEventStream() *eventStream {
	return &eventStream{id: newSessionID()[:16], changed: make(chan struct{})}
}

// eventID is the SSE id of event seq.
func (st *eventStream) eventID(seq int) string {
	if st.noIDs {
		return ""
	}
	return st.id + "-" + strconv.Itoa(seq)
}

// splitEventID parses "<streamID>-<n>".
func splitEventID(id string) (stream string, seq int, ok bool) {
	i := strings.LastIndexByte(id, '-')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(id[i+1:])
	if err != nil || n < 0 {
		return "", 0, false
	}
	return id[:i], n, true
}

func (st *eventStream) signalLocked() {
	close(st.changed)
	st.changed = make(chan struct{})
}

// append adds one message event; it reports false once the stream has ended.
func (st *eventStream) append(data []byte) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.appendLocked(data)
}

func (st *eventStream) appendLocked(data []byte) bool {
	if st.ended {
		return false
	}
	st.seq++
	st.events = append(st.events, streamEvent{seq: st.seq, data: data})
	if len(st.events) > StreamKeepEvents {
		st.events = st.events[len(st.events)-StreamKeepEvents:]
	}
	st.signalLocked()
	return true
}

// end closes the stream: with the answer when data is non-nil, abruptly when abort is set.
func (st *eventStream) end(data []byte, abort bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if data != nil && st.appendLocked(data) {
		st.final = st.seq
	}
	if !st.ended {
		st.ended, st.abort, st.endedAt = true, abort, time.Now()
		st.signalLocked()
	}
}

func (st *eventStream) isDetached() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.detached
}

// attach claims the stream for one writer resuming after seq; it fails when another writer has
// it, or when the events after seq are no longer kept.
func (st *eventStream) attach(after int) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	switch {
	case st.attached:
		return fmt.Errorf("stream %s is being sent on another connection", st.id)
	case after > st.seq:
		return fmt.Errorf("stream %s has no event %d yet", st.id, after)
	case after < st.seq && (len(st.events) == 0 || st.events[0].seq > after+1):
		return fmt.Errorf("the events of stream %s after %d are no longer kept", st.id, after)
	}
	st.attached = true
	return nil
}

// sendResult says how a writer's turn on a stream ended.
type sendResult int

const (
	sentAll   sendResult = iota // the stream ended and every event was written
	sentCut                     // the server cut the connection on purpose (DropSSEAfter)
	sentAbort                   // the call ended without an answer: drop the connection
	sentGone                    // the connection or the server went away
)

// send writes the events after seq `after` to ew until the stream ends. limit, when positive,
// cuts the connection after that many events and always before the answer, leaving the rest
// for a resuming GET. send releases the stream when it returns.
func (st *eventStream) send(ctx context.Context, ew *sseWriter, after, limit int) sendResult {
	defer func() {
		st.mu.Lock()
		st.attached = false
		st.mu.Unlock()
	}()
	sent, written := after, 0
	for {
		st.mu.Lock()
		var pending []streamEvent
		for _, ev := range st.events {
			if ev.seq > sent {
				pending = append(pending, ev)
			}
		}
		ended, abort, final, changed := st.ended, st.abort, st.final, st.changed
		if limit > 0 && (written >= limit || (len(pending) > 0 && pending[0].seq == final)) {
			st.detached = true
			st.mu.Unlock()
			return sentCut
		}
		st.mu.Unlock()
		for _, ev := range pending {
			if limit > 0 && (written >= limit || ev.seq == final) {
				break // cut at the top of the next turn, under the lock
			}
			if ew.message(st.eventID(ev.seq), ev.data) != nil {
				return sentGone
			}
			sent = ev.seq
			written++
		}
		if sent < st.lastSeq() {
			continue
		}
		if ended {
			if abort {
				return sentAbort
			}
			return sentAll
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return sentGone
		}
	}
}

func (st *eventStream) lastSeq() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.seq
}

// newStream registers a new stream in the session, forgetting finished streams past StreamTTL
// (and the oldest finished ones beyond maxFinishedStreams).
func (hs *httpSession) newStream() *eventStream {
	st := newEventStream()
	now := time.Now()
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.streams == nil {
		hs.streams = make(map[string]*eventStream)
	}
	finished := 0
	var oldest *eventStream
	for id, other := range hs.streams {
		other.mu.Lock()
		ended, endedAt, attached := other.ended, other.endedAt, other.attached
		other.mu.Unlock()
		if !ended || attached {
			continue
		}
		if now.Sub(endedAt) > StreamTTL {
			delete(hs.streams, id)
			continue
		}
		finished++
		if oldest == nil || endedAt.Before(oldest.endedAt) {
			oldest = other
		}
	}
	if finished >= maxFinishedStreams && oldest != nil {
		delete(hs.streams, oldest.id)
	}
	hs.streams[st.id] = st
	return st
}

// stream finds a session's stream by id.
func (hs *httpSession) stream(id string) *eventStream {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.streams[id]
}

// resume serves a GET with Last-Event-ID: the events after it, then the rest of the stream.
func (s *Server) resume(w http.ResponseWriter, r *http.Request, hs *httpSession, lastID string) {
	sid, seq, ok := splitEventID(lastID)
	var st *eventStream
	if ok {
		st = hs.stream(sid)
	}
	if st == nil {
		http.Error(w, "unknown or expired Last-Event-ID "+strconv.Quote(lastID), http.StatusBadRequest)
		return
	}
	if err := st.attach(seq); err != nil {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	s.Backend.resumes.Add(1)
	ew := newSSEWriter(w)
	if ew.start() != nil {
		return
	}
	if st.send(r.Context(), ew, seq, 0) == sentAbort {
		abortConnection(w)
	}
}

// answerStream runs one legacy-session request whose answer is a resumable event stream. The
// call runs on its own goroutine so that a cut POST (DropSSEAfter) leaves it running for a
// resuming GET; a client that drops the POST itself still cancels it. It reports whether a
// successful response was produced.
func (s *Server) answerStream(w http.ResponseWriter, r *http.Request, req *request, p *httpPeer, hs *httpSession) bool {
	st := hs.newStream()
	_ = st.attach(0)
	p.stream = st
	ctx, cancel := context.WithCancel(hs.ctx) // the session ending cancels the call
	stop := context.AfterFunc(r.Context(), func() {
		if !st.isDetached() {
			cancel()
		}
	})
	entry := hs.calls.add(req.idKey(), cancel)
	var ok bool
	done := make(chan struct{})
	run := func() {
		defer close(done)
		defer cancel()
		defer stop()
		resp := s.Backend.handle(ctx, p, req)
		cancelled := hs.calls.remove(req.idKey(), entry)
		switch {
		case cancelled:
			st.end(nil, false) // the client cancelled: the stream ends without an answer
		case resp == nil:
			st.end(nil, true) // never answered (a hang ended by the session or the server)
		case resp.abort:
			s.dropSession(hs)
			st.end(nil, true)
		default:
			ok = resp.Error == nil
			frames := resp.frames()
			for _, f := range frames[:len(frames)-1] {
				st.append(f)
			}
			st.end(frames[len(frames)-1], false)
		}
	}
	if !s.spawn(run) {
		cancel()
		stop()
		abortConnection(w)
		return false
	}
	ew := newSSEWriter(w)
	start := func() error { return ew.priming(st.eventID(0), RetryMillis) }
	if s.Backend.opts.NoEventStore {
		// No event store: no priming event and no ids, so a cut stream cannot be resumed.
		st.noIDs = true
		start = ew.open
	}
	if start() != nil {
		return false // the client is gone: returning ends r's context, which cancels the call
	}
	limit := 0
	if req.Method == "tools/call" {
		limit = s.Backend.opts.DropSSEAfter
	}
	switch st.send(r.Context(), ew, 0, limit) {
	case sentAll:
		<-done
		return ok
	case sentAbort:
		abortConnection(w)
	}
	return false
}

// spawn runs fn on a goroutine Close waits for; it reports false when the server is closing.
func (s *Server) spawn(fn func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.handlers.Add(1)
	go func() {
		defer s.handlers.Done()
		fn()
	}()
	return true
}
