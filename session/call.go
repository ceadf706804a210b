package session

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpspec/mcpspec/session/transport"
)

// This file correlates requests with responses: the pending map, the wait with its deadline
// and hang detector, and the hand-off between the reader and the waiting caller.
//
// Ownership rule: whoever removes a call from Session.pending (under Session.mu) completes it,
// exactly once. The reader, Close and a failing connection complete it by filling its fields
// and sending on done; a caller that gives up (deadline, cancel) removes it itself and owns it.
// A caller that finds its call already removed waits on done, which is then certain to come.

// call is one request waiting for its response.
type call struct {
	id   int64
	sent time.Time
	// done receives exactly one value from the goroutine that completed the call.
	done chan struct{}
	// progress, when set, receives notifications/progress whose token is id.
	progress func(Progress)
	// linger keeps the progress route once a result answers the call (a task-augmented
	// tools/call: the token stays valid while the task runs; see Session.lingering).
	linger bool
	// life is when the server last showed the call was alive (a notifications/progress for
	// its token), as Unix nanoseconds; 0 when it has not. The hang detector counts from it.
	life atomic.Int64

	// Written by the completer before the send on done:
	result json.RawMessage
	at     time.Time
	fail   *Error
}

var callPool = sync.Pool{New: func() any { return &call{done: make(chan struct{}, 1)} }}

func getCall(id int64) *call {
	c := callPool.Get().(*call)
	c.id = id
	return c
}

func putCall(c *call) {
	c.progress, c.result, c.fail, c.linger = nil, nil, nil, false
	c.at, c.sent = time.Time{}, time.Time{}
	c.life.Store(0)
	callPool.Put(c)
}

var timerPool = sync.Pool{New: func() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}}

func getTimer(d time.Duration) *time.Timer {
	t := timerPool.Get().(*time.Timer)
	t.Reset(d)
	return t
}

// putTimer stops t and pools it; since Go 1.23 a stopped timer delivers no stale value.
func putTimer(t *time.Timer) {
	t.Stop()
	timerPool.Put(t)
}

// unroutable is a received frame that answered no pending call: a malformed frame with no
// salvageable id or a response without an id. A call that later times out is blamed on it.
type unroutable struct {
	at       time.Time
	category Category
	message  string
	// hint, when set, replaces the usual hint of a call blamed on this frame.
	hint  string
	frame []byte
	err   error
}

// lateExpected marks an abandoned call whose late answer is expected and dropped silently.
const lateExpected Category = "late answer expected"

const (
	maxUnroutable = 64
	maxAbandoned  = 4096
	maxFindings   = 1000
)

// abandonedSet remembers the ids of calls given up recently so a late response is reported as
// such. It is bounded: the oldest ids are forgotten first.
type abandonedSet struct {
	cat  map[int64]Category
	ring []int64
	next int
}

func (a *abandonedSet) add(id int64, c Category) {
	if a.cat == nil {
		a.cat = make(map[int64]Category)
		a.ring = make([]int64, maxAbandoned)
	}
	if old := a.ring[a.next]; old != 0 {
		delete(a.cat, old)
	}
	a.ring[a.next] = id
	a.next = (a.next + 1) % maxAbandoned
	a.cat[id] = c
}

func (a *abandonedSet) take(id int64) (Category, bool) {
	c, ok := a.cat[id]
	if ok {
		delete(a.cat, id)
	}
	return c, ok
}

// register adds c to the pending calls, or fails when the session cannot take calls.
func (s *Session) register(c *call) *Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sh.dead != nil {
		e := *s.sh.dead
		return &e
	}
	if s.sh.closing {
		return &Error{Category: Cancelled, Message: "session closed", Err: ErrClosed}
	}
	if _, dup := s.sh.pending[c.id]; dup {
		return &Error{Category: ProtocolError, Message: "id already pending", Err: ErrIDInUse}
	}
	s.sh.pending[c.id] = c
	return nil
}

// take removes c from the pending calls; true means the caller now owns its completion.
// A quiet call's late answer is expected and will not be reported (see [lateExpected]).
func (s *Session) take(c *call, why Category, quiet bool) (owned bool, blame *unroutable) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sh.pending[c.id] != c {
		return false, nil
	}
	delete(s.sh.pending, c.id)
	if why != "" {
		mark := why
		if quiet {
			mark = lateExpected
		}
		s.sh.abandoned.add(c.id, mark)
	}
	if why == Timeout || why == Deadlock {
		for i, u := range s.sh.unroutable {
			if !u.at.Before(c.sent) {
				s.sh.unroutable = append(s.sh.unroutable[:i], s.sh.unroutable[i+1:]...)
				return true, &u
			}
		}
	}
	return true, nil
}

// waitSpec tunes one wait.
type waitSpec struct {
	method  string
	timeout time.Duration
	// noHang turns the hang detector off (handshake requests).
	noHang bool
	// noCancel suppresses notifications/cancelled (initialize, the discover probe).
	noCancel bool
	// quiet says a late answer is expected once the call is given up (the handshake's losing
	// request when discover and initialize race), so it is dropped rather than reported.
	quiet bool
	// ids, when set, receives the request id once the call is pending, so that the handshake
	// can tell whether the call was answered (see Session.awaiting).
	ids *atomic.Int64
	// header, when set, goes with the frame to a [transport.HeaderSender] connection.
	header http.Header
	// keepProgress keeps the progress route of a call answered with a result (see call.linger).
	keepProgress bool
}

// limits are one attempt's deadlines.
type limits struct {
	// deadline is the request timeout or ctx's deadline, whichever comes first.
	deadline time.Time
	// hangAt and hangEnd are the hang threshold and threshold+grace; zero when the hang
	// detector is off.
	hangAt, hangEnd time.Time
}

func (s *Session) limitsFor(ctx context.Context, sent time.Time, w *waitSpec) limits {
	l := limits{deadline: sent.Add(w.timeout)}
	if d, ok := ctx.Deadline(); ok && d.Before(l.deadline) {
		l.deadline = d
	}
	if s.opts.HangThreshold > 0 && !w.noHang {
		l.hangAt = sent.Add(s.opts.HangThreshold)
		l.hangEnd = l.hangAt.Add(s.opts.HangGrace)
	}
	return l
}

// sendDeadline bounds conn.Send (HTTP blocks until the status arrives): the earlier of the
// deadline and the end of the hang grace, with the category its passing means.
func (l limits) sendDeadline() (time.Time, Category) {
	if !l.hangEnd.IsZero() && l.hangEnd.Before(l.deadline) {
		return l.hangEnd, Deadlock
	}
	return l.deadline, Timeout
}

// lapsedAt is the category of a call whose wait ran out at now: Deadlock when the end of the hang
// grace came first and has passed, else Timeout. The deadlines decide, not which timer a select
// happened to see first (after a stall of the waiting goroutine both may be ready at once).
func (l limits) lapsedAt(now time.Time) Category {
	if !l.hangEnd.IsZero() && l.hangEnd.Before(l.deadline) && !now.Before(l.hangEnd) {
		return Deadlock
	}
	return Timeout
}

// hungAt reports whether an answer at t came after the hang threshold.
func (l limits) hungAt(t time.Time) bool { return !l.hangAt.IsZero() && t.After(l.hangAt) }

// revive moves the hang threshold and its grace to count from the call's last sign of life (a
// progress notification), when that is later than counting from the send; it reports whether
// they moved. Progress is not an answer: it never extends the request timeout.
func (l *limits) revive(c *call, threshold, grace time.Duration) bool {
	ns := c.life.Load()
	if l.hangAt.IsZero() || ns == 0 {
		return false
	}
	at := time.Unix(0, ns).Add(threshold)
	if !at.After(l.hangAt) {
		return false
	}
	l.hangAt, l.hangEnd = at, at.Add(grace)
	return true
}

// await waits for c's outcome and returns its classified failure, if any; the result and its
// arrival stay in c (a Hang failure comes with the late result as well).
func (s *Session) await(ctx context.Context, c *call, w *waitSpec, l *limits) *Error {
	timer := getTimer(time.Until(l.deadline))
	defer putTimer(timer)

	var hangC <-chan time.Time
	var hangT *time.Timer
	if !l.hangAt.IsZero() {
		hangT = getTimer(time.Until(l.hangAt))
		defer putTimer(hangT)
		hangC = hangT.C
	}
	hung := false
	for {
		var why Category
		select {
		case <-c.done:
			if l.revive(c, s.opts.HangThreshold, s.opts.HangGrace) {
				hung = false
			}
			return s.outcome(c, w, hung || l.hungAt(c.at))
		case <-ctx.Done():
			why = Cancelled
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				why = l.lapsedAt(time.Now())
			}
		case <-timer.C:
			why = l.lapsedAt(time.Now())
		case <-hangC:
			// Progress since the send is a sign of life: the threshold counts from the last.
			l.revive(c, s.opts.HangThreshold, s.opts.HangGrace)
			now := time.Now()
			if now.Before(l.hangAt) {
				hung = false
				hangT.Reset(l.hangAt.Sub(now))
				continue
			}
			if now.Before(l.hangEnd) {
				hung = true
				hangT.Reset(l.hangEnd.Sub(now))
				continue
			}
			hung = true
			why = l.lapsedAt(now)
		}
		owned, blame := s.take(c, why, w.quiet)
		if !owned {
			<-c.done
			return s.outcome(c, w, hung || l.hungAt(c.at))
		}
		return s.giveUp(ctx, c, w, why, blame, l.deadline.Sub(c.sent))
	}
}

// outcome classifies a completed call: its failure, or a Hang for a result that came late (the
// result stays in c.result, nil for a failure).
func (s *Session) outcome(c *call, w *waitSpec, hung bool) *Error {
	if c.fail != nil {
		e := c.fail
		e.Method, e.ID = w.method, c.id
		end := c.at
		if end.IsZero() {
			end = time.Now()
		}
		e.Elapsed = end.Sub(c.sent)
		if hung && (e.Category == ServerError || e.Category == ProtocolError) {
			e.Hint = "answered after the hang threshold (" + s.opts.HangThreshold.String() + "); the error came late: " + string(e.Category)
			e.Category = Hang
		}
		return e
	}
	if hung {
		lat := c.at.Sub(c.sent)
		return &Error{
			Category: Hang, Method: w.method, ID: c.id, Elapsed: lat,
			Message: "response arrived after the hang threshold (" + s.opts.HangThreshold.String() + ") within the grace period",
			Hint:    "the server is slow under this load; the response is kept in Error.Response",
		}
	}
	return nil
}

// giveUp classifies a call its caller abandoned and tells the server (legacy era). limit is the
// time the call was given (its deadline less its send time), which a Timeout names: the limit
// the user set, not the slightly longer time a timer took to fire.
func (s *Session) giveUp(ctx context.Context, c *call, w *waitSpec, why Category, blame *unroutable, limit time.Duration) *Error {
	elapsed := time.Since(c.sent)
	e := &Error{Category: why, Method: w.method, ID: c.id, Elapsed: elapsed}
	switch why {
	case Cancelled:
		e.Message, e.Err = "cancelled by the caller", ctx.Err()
	case Timeout:
		if limit <= 0 || limit > elapsed {
			limit = elapsed
		}
		e.Message = "no response within " + limit.Round(time.Millisecond).String()
		if ctx.Err() != nil {
			e.Err = ctx.Err()
		}
	case Deadlock:
		e.Message = "no response within the hang threshold plus grace (" + (s.opts.HangThreshold + s.opts.HangGrace).String() + ")"
		e.Hint = "the server appears stuck on this request (lazy init, lock, worker starvation)"
	}
	if blame != nil {
		e.Category, e.Frame, e.Err = blame.category, blame.frame, blame.err
		e.Message = "no routable response; the server sent an unroutable frame during the call: " + blame.message
		e.Hint = "the server answered under an id the client never sent, or without one, so no response matched the request: a bug in the server's id handling"
		if blame.category == Malformed {
			e.Hint = "the server sent a frame that is not valid JSON-RPC and names no request; on stdio, stdout must carry only MCP messages (log to stderr)"
		}
		if blame.hint != "" {
			e.Message = "no routable response; the server sent a frame during the call that the client could not take: " + blame.message
			e.Hint = blame.hint
		}
	}
	if !w.noCancel {
		s.cancelAtServer(ctx, c.id, e.Message)
	}
	return e
}

// cancelledBySend reports whether a failed Send says the server already saw the request
// cancelled (see [transport.SendCancelled]).
func cancelledBySend(err error) bool {
	var rc transport.SendCancelled
	return errors.As(err, &rc) && rc.RequestCancelled()
}

// cancelAtServer tells the server the client gave up on request id: notifications/cancelled
// in the legacy era, and in the stateless era unless the connection cancels the request itself
// (stream transports use the notification in every era).
func (s *Session) cancelAtServer(ctx context.Context, id int64, reason string) {
	switch s.Era() {
	case EraLegacy:
		s.sendCancelled(ctx, id, reason)
	case EraStateless:
		if rc, ok := s.conn.(transport.RequestCanceller); ok && rc.CancelRequest(id) {
			return
		}
		s.sendCancelled(ctx, id, reason)
	}
}

// sendCancelled sends notifications/cancelled for id, bounded to one second.
func (s *Session) sendCancelled(ctx context.Context, id int64, reason string) {
	b := make([]byte, 0, 128+len(reason))
	b = append(b, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`...)
	b = appendInt(b, id)
	b = append(b, `,"reason":`...)
	b = appendString(b, reason)
	b = append(b, "}}"...)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	_ = s.send(cctx, b)
}

// send hands one frame to the transport and shows it to OnFrame.
func (s *Session) send(ctx context.Context, frame []byte) error {
	if s.opts.OnFrame != nil {
		s.opts.OnFrame(Sent, transport.Frame{Data: frame, At: time.Now()})
	}
	return s.conn.Send(ctx, frame)
}

// roundTrip sends one pre-encoded request frame with id and waits for its outcome; it sets
// out.Result (for a Hang failure too: the late result) and out.Timing.
//
// Its frame stays on the stack while the call waits (in Send over HTTP, in await otherwise),
// so the work before and after the wait is done in functions of their own (pend, sendFailed),
// whose frames are gone by then: see bench/README.md, "Why the HTTP/1.1 figure moves".
func (s *Session) roundTrip(ctx context.Context, id int64, frame []byte, w *waitSpec, progress func(Progress), out *Response) *Error {
	c, e := s.pend(id, frame, w, progress)
	if e != nil {
		return e
	}
	l := s.limitsFor(ctx, c.sent, w)
	sendBy, _ := l.sendDeadline()
	// Send runs under ctx bounded by sendBy. When ctx ends first anyway (a test's timeout
	// shorter than the request's), ctx itself is that context and costs nothing more.
	sctx, own := ctx, (*sendCtx)(nil)
	if d, ok := ctx.Deadline(); !ok || d.After(sendBy) {
		own = newSendCtx(ctx, sendBy)
		sctx = own
	}
	var err error
	if s.headerConn != nil {
		// Without headers (w.header nil) this is Send, one frame shallower over HTTP.
		err = s.headerConn.SendWithHeader(sctx, frame, w.header)
	} else {
		err = s.conn.Send(sctx, frame)
	}
	var ended error
	if err != nil {
		ended = sctx.Err()
	}
	if own != nil {
		own.release()
	}
	if err == nil {
		e = s.await(ctx, c, w, &l)
	} else {
		e = s.sendFailed(ctx, c, w, &l, err, ended)
	}
	// A completed call holds its result (nil for a failure) and arrival; a given-up one neither.
	out.Result = c.result
	out.Timing = Timing{Sent: c.sent}
	if !c.at.IsZero() {
		out.Timing.Received, out.Timing.Latency = c.at, c.at.Sub(c.sent)
	}
	putCall(c)
	return e
}

// pend makes id's call pending and shows frame to OnFrame; the call's sent time is then.
func (s *Session) pend(id int64, frame []byte, w *waitSpec, progress func(Progress)) (*call, *Error) {
	c := getCall(id)
	c.progress = progress
	c.linger = progress != nil && w.keepProgress
	if e := s.register(c); e != nil {
		putCall(c)
		e.Method, e.ID = w.method, id
		return nil, e
	}
	if w.ids != nil {
		w.ids.Store(id)
	}
	if s.opts.OnFrame != nil {
		s.opts.OnFrame(Sent, transport.Frame{Data: frame, At: time.Now()})
	}
	c.sent = time.Now()
	return c, nil
}

// sendFailed classifies call c whose Send failed with err: past its deadline or cancelled
// (HTTP), or the connection failed. ended is the send context's error. As with await, an
// outcome that won the race stays in c.
func (s *Session) sendFailed(ctx context.Context, c *call, w *waitSpec, l *limits, err, ended error) *Error {
	var why Category
	if ended != nil {
		switch {
		case errors.Is(ctx.Err(), context.Canceled):
			why = Cancelled
		case ctx.Err() != nil:
			why = Timeout
		default:
			_, why = l.sendDeadline()
		}
	}
	owned, blame := s.take(c, why, w.quiet)
	switch {
	case !owned:
		// A response (or the connection's end) beat the send error; take that outcome.
		<-c.done
		return s.outcome(c, w, l.hungAt(c.at))
	case why != "":
		if cancelledBySend(err) {
			// Dropping the POST was the cancellation (Streamable HTTP, stateless era).
			quiet := *w
			quiet.noCancel = true
			w = &quiet
		}
		e := s.giveUp(ctx, c, w, why, blame, l.deadline.Sub(c.sent))
		if e.Err == nil {
			e.Err = err
		}
		return e
	}
	e := s.classifySend(err)
	e.Method, e.ID, e.Elapsed = w.method, c.id, time.Since(c.sent)
	return e
}

// failAll completes every pending call with a copy of e (the connection ended or Close).
func (s *Session) failAll(pend map[int64]*call, e *Error) {
	now := time.Now()
	for _, c := range pend {
		f := *e
		c.fail, c.at = &f, now
		c.done <- struct{}{}
	}
}
