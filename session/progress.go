package session

import "sync"

// This file keeps the progress of a task-augmented tools/call routed after its answer. The
// 2025-11-25 tasks utility keeps the request's progressToken valid for the task's whole
// lifetime: the server may send notifications/progress with it until the task is terminal.
// The reader moves the call's progress callback here when a result answers a call made with
// request.keepProgress (as the TypeScript SDK keeps its handler for a CreateTaskResult), and
// the task flow forgets it once the task ends or the call is given up.

// progressRoute is the progress callback of one lingering token.
type progressRoute struct {
	// mu serializes deliveries with forget, so that no delivery starts once forget returned.
	mu     sync.Mutex
	fn     func(Progress)
	closed bool
}

// deliver calls the route's callback unless the route was forgotten.
func (r *progressRoute) deliver(p Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		r.fn(p)
	}
}

// lingerProgress keeps fn routed for token id; s.mu is held.
func (s *Session) lingerProgress(id int64, fn func(Progress)) {
	if s.sh.lingering == nil {
		s.sh.lingering = make(map[int64]*progressRoute)
	}
	s.sh.lingering[id] = &progressRoute{fn: fn}
}

// forgetProgress ends the lingering route of token id, if any. Once it returns the callback is
// not called again (a delivery under way finishes first).
func (s *Session) forgetProgress(id int64) {
	s.mu.Lock()
	r := s.sh.lingering[id]
	delete(s.sh.lingering, id)
	s.mu.Unlock()
	if r != nil {
		r.mu.Lock()
		r.closed = true
		r.mu.Unlock()
	}
}
