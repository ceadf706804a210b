package serverconn

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/mcpspec/mcpspec/session"
)

// MessageKind tells a server's notification from its request to the client.
type MessageKind string

// The kinds of [Message].
const (
	KindNotification MessageKind = "notification"
	KindRequest      MessageKind = "request"
)

// Message is one thing the server sent on a session besides answers: a notification, or a
// request to the client with the client's reply.
type Message struct {
	Kind   MessageKind
	Method string
	// Params is the message's params as sent (nil when absent).
	Params json.RawMessage
	At     time.Time
	// Input marks a stateless-era MRTR input request (see [session.ServerRequest]).
	Input bool
	// Reply is what the inbox's handler answered a request; nil when no handler took it (the
	// session's canned replies answered).
	Reply *session.ClientReply
}

// MaxInbox bounds the messages an [Inbox] holds between two takes; later ones are counted in
// [Inbox.Take]'s dropped, not kept.
const MaxInbox = 1000

// Inbox records what the server sends on one session besides answers — its notifications and
// its requests to the client — for a caller to take step by step, and holds the handler that
// answers those requests, which the caller may change between steps. [Options].Inbox turns it
// on. It is safe for concurrent use; a nil *Inbox records nothing and answers nothing.
type Inbox struct {
	mu       sync.Mutex // guards the fields below
	messages []Message
	dropped  int
	handler  func(session.ServerRequest) (session.ClientReply, bool)
	// changed is closed (and replaced) whenever a message arrives, for Wait.
	changed chan struct{}
}

func newInbox() *Inbox { return &Inbox{changed: make(chan struct{})} }

// SetHandler makes h answer the server's requests from now on; nil leaves them to the
// session's canned replies.
func (in *Inbox) SetHandler(h func(session.ServerRequest) (session.ClientReply, bool)) {
	if in == nil {
		return
	}
	in.mu.Lock()
	in.handler = h
	in.mu.Unlock()
}

// Take returns the messages recorded since the last Take (or Discard), in arrival order, and
// how many more were dropped over [MaxInbox].
func (in *Inbox) Take() (msgs []Message, dropped int) {
	if in == nil {
		return nil, 0
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	msgs, dropped = in.messages, in.dropped
	in.messages, in.dropped = nil, 0
	return msgs, dropped
}

// Discard forgets the messages recorded so far: what a server sent before a step is not the
// step's.
func (in *Inbox) Discard() { _, _ = in.Take() }

// Wait waits until done holds over the messages recorded since the last Take, or ctx ends. It
// reports whether done held.
func (in *Inbox) Wait(ctx context.Context, done func([]Message) bool) bool {
	if in == nil {
		return false
	}
	for {
		in.mu.Lock()
		ok := done(in.messages)
		ch := in.changed
		in.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// add records m; it runs on the session's reader goroutine or a reply goroutine.
func (in *Inbox) add(m Message) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.messages) >= MaxInbox {
		in.dropped++
		return
	}
	in.messages = append(in.messages, m)
	close(in.changed)
	in.changed = make(chan struct{})
}

// notification records a server notification.
func (in *Inbox) notification(n session.Notification) {
	in.add(Message{Kind: KindNotification, Method: n.Method, Params: clone(n.Params), At: n.At})
}

// request answers a server request with the handler, if any, and records both.
func (in *Inbox) request(r session.ServerRequest) (session.ClientReply, bool) {
	in.mu.Lock()
	h := in.handler
	in.mu.Unlock()
	m := Message{Kind: KindRequest, Method: r.Method, Params: clone(r.Params), At: r.At, Input: r.Input}
	var rep session.ClientReply
	ok := false
	if h != nil {
		rep, ok = h(r)
	}
	if ok {
		m.Reply = &rep
	}
	in.add(m)
	return rep, ok
}

func clone(b json.RawMessage) json.RawMessage {
	if b == nil {
		return nil
	}
	return append(json.RawMessage(nil), b...)
}
