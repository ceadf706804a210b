package ui

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Bounds of the event stream.
const (
	eventBacklog  = 2000             // events kept for a client that reconnects with Last-Event-ID
	clientBuffer  = 512              // events queued for one client before it is cut off
	heartbeat     = 15 * time.Second // a comment line keeps idle connections open
	retryMillis   = 1000             // the browser's first reconnect delay; the page backs off from there
	maxEventBytes = 1 << 20
)

// event is one message of the stream.
type event struct {
	ID   int64
	Type string
	Data []byte
}

// broker fans events out to the open streams. A stream that falls clientBuffer events behind
// is closed: its browser reconnects with Last-Event-ID and catches up from the backlog, so a
// slow page never slows a run.
type broker struct {
	// mu guards the fields below.
	mu      sync.Mutex
	next    int64
	backlog []event
	subs    map[chan event]struct{}
	done    chan struct{}
	closed  bool
}

func newBroker() *broker {
	return &broker{subs: map[chan event]struct{}{}, done: make(chan struct{})}
}

// publish sends an event of type typ with v as its JSON data to every stream.
func (b *broker) publish(typ string, v any) {
	data, err := json.Marshal(v)
	if err != nil || len(data) > maxEventBytes {
		data, _ = json.Marshal(map[string]string{"error": fmt.Sprintf("event %s not sent: %v", typ, err)})
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.next++
	e := event{ID: b.next, Type: typ, Data: data}
	b.backlog = append(b.backlog, e)
	if len(b.backlog) > eventBacklog {
		b.backlog = b.backlog[len(b.backlog)-eventBacklog:]
	}
	for ch := range b.subs {
		select {
		case ch <- e:
		default:
			delete(b.subs, ch)
			close(ch)
		}
	}
}

// close ends every stream.
func (b *broker) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	close(b.done)
	for ch := range b.subs {
		delete(b.subs, ch)
		close(ch)
	}
}

// subscribe returns a channel of the events after lastID (those still in the backlog first).
func (b *broker) subscribe(lastID int64) (chan event, []event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ch := make(chan event, clientBuffer)
	var missed []event
	for _, e := range b.backlog {
		if e.ID > lastID {
			missed = append(missed, e)
		}
	}
	if b.closed {
		close(ch)
		return ch, missed
	}
	b.subs[ch] = struct{}{}
	return ch, missed
}

func (b *broker) unsubscribe(ch chan event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.subs[ch]; ok {
		delete(b.subs, ch)
		close(ch)
	}
}

// serve is GET /api/events: Server-Sent Events, resumable with Last-Event-ID.
func (b *broker) serve(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "streaming unsupported")
		return
	}
	// A browser reconnecting by itself sends Last-Event-ID; the page, reconnecting with its own
	// backoff through a new EventSource, passes ?last= instead.
	lastID := r.Header.Get("Last-Event-ID")
	if lastID == "" {
		lastID = r.URL.Query().Get("last")
	}
	last, _ := strconv.ParseInt(lastID, 10, 64)
	ch, missed := b.subscribe(last)
	defer b.unsubscribe(ch)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "retry: %d\n\n", retryMillis)
	for _, e := range missed {
		writeEvent(w, e)
	}
	fl.Flush()
	t := time.NewTicker(heartbeat)
	defer t.Stop()
	for {
		select {
		case e, ok := <-ch:
			if !ok {
				return
			}
			writeEvent(w, e)
			fl.Flush()
		case <-t.C:
			fmt.Fprint(w, ": keep-alive\n\n")
			fl.Flush()
		case <-r.Context().Done():
			return
		case <-b.done:
			return
		}
	}
}

// writeEvent writes one event; its data is one line of JSON (json.Marshal escapes newlines).
func writeEvent(w http.ResponseWriter, e event) {
	fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.ID, e.Type, e.Data)
}
