package ui

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcpspec/mcpspec/session"
)

// askTimeout is how long a server's sampling or elicitation request waits for the person at the
// page before it is declined.
const askTimeout = 45 * time.Second

// asks holds a session's server requests (sampling/createMessage, elicitation/create, and the
// stateless era's input requests) waiting for the person at the page to answer them.
type asks struct {
	events  *broker
	session string
	closed  chan struct{}

	// mu guards next and pending.
	mu      sync.Mutex
	next    int
	pending map[string]*ask
}

// ask is one server request waiting for an answer.
type ask struct {
	ID     string          `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
	Input  bool            `json:"input,omitempty"`
	answer chan session.ClientReply
}

func newAsks(ev *broker, sessionID string) *asks {
	return &asks{events: ev, session: sessionID, closed: make(chan struct{}), pending: map[string]*ask{}}
}

// onRequest is the session's OnRequest: it shows sampling and elicitation requests on the page
// and waits for the answer, until askTimeout or the session closes. Other requests fall through
// to the session's canned replies.
func (a *asks) onRequest(r session.ServerRequest) (session.ClientReply, bool) {
	if r.Method != "sampling/createMessage" && r.Method != "elicitation/create" {
		return session.ClientReply{}, false
	}
	a.mu.Lock()
	a.next++
	q := &ask{ID: "q" + strconv.Itoa(a.next), Method: r.Method, Params: r.Params, Input: r.Input, answer: make(chan session.ClientReply, 1)}
	if len(q.Params) == 0 || !json.Valid(q.Params) {
		q.Params = nil
	}
	a.pending[q.ID] = q
	a.mu.Unlock()
	a.events.publish("ask", map[string]any{"session": a.session, "ask": q})
	defer func() {
		a.mu.Lock()
		delete(a.pending, q.ID)
		a.mu.Unlock()
		a.events.publish("ask.done", map[string]any{"session": a.session, "id": q.ID})
	}()
	t := time.NewTimer(askTimeout)
	defer t.Stop()
	select {
	case rep := <-q.answer:
		return rep, true
	case <-t.C:
		return session.ClientReply{Code: -32603, Message: "nobody answered in the mcpspec ui within " + askTimeout.String()}, true
	case <-a.closed:
		return session.ClientReply{Code: -32603, Message: "the mcpspec ui session closed"}, true
	}
}

// list returns the requests waiting.
func (a *asks) list() []*ask {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]*ask, 0, len(a.pending))
	for _, q := range a.pending {
		out = append(out, q)
	}
	return out
}

// answerJSON is POST /api/sessions/{id}/asks/{ask}: a result, or decline with a message.
type answerJSON struct {
	Result  json.RawMessage `json:"result,omitempty"`
	Decline string          `json:"decline,omitempty"`
}

func (a *asks) reply(id string, ans answerJSON) bool {
	a.mu.Lock()
	q := a.pending[id]
	a.mu.Unlock()
	if q == nil {
		return false
	}
	rep := session.ClientReply{Result: ans.Result}
	if ans.Decline != "" || len(ans.Result) == 0 {
		rep = session.ClientReply{Code: -32603, Message: "declined in the mcpspec ui: " + ans.Decline}
	}
	select {
	case q.answer <- rep:
	default: // answered already
	}
	return true
}

func (ss *sessions) asksOf(w http.ResponseWriter, r *http.Request) {
	if l, ok := ss.get(w, r); ok {
		writeJSON(w, http.StatusOK, l.asks.list())
	}
}

func (ss *sessions) answer(w http.ResponseWriter, r *http.Request) {
	l, ok := ss.get(w, r)
	if !ok {
		return
	}
	var ans answerJSON
	if !readJSON(w, r, &ans) {
		return
	}
	if len(ans.Result) > 0 && !json.Valid(ans.Result) {
		writeError(w, http.StatusBadRequest, "result is not JSON")
		return
	}
	if !l.asks.reply(r.PathValue("ask"), ans) {
		writeError(w, http.StatusNotFound, "no request "+r.PathValue("ask")+" waiting: it was answered, timed out or the session closed")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": r.PathValue("ask"), "state": "answered"})
}
