package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// errorCycleCodes are the codes Options.ErrorCycle answers with, in order.
var errorCycleCodes = []int{CodeMethodNotFound, CodeInvalidParams, CodeInternalError, CodeServerError}

// faultState is the failure modes' memory, shared by all connections of a Backend.
type faultState struct {
	mu         sync.Mutex // guards every field below
	active     map[*activeCall]struct{}
	deadlocked bool     // HangWhenConcurrent has fired: every later tools/call hangs too
	leak       [][]byte // LeakKBPerCall's retained memory
	divergent  int      // Divergent's racy counter
	cycle      int      // ErrorCycle's position
	responses  int      // tools/call responses produced, for MalformedEvery
	lazy       lazyState
	shared     string // CrossTalk's buffer
}

// lazyState is where LazyInitDeadlock's initialization stands.
type lazyState int

const (
	lazyNone       lazyState = iota // no tools/call yet
	lazyRunning                     // the first tools/call is initializing
	lazyDone                        // initialized without a concurrent call
	lazyDeadlocked                  // a call arrived during the initialization
)

// crossTalkWork is how long a CrossTalk call holds the shared buffer's content before answering.
const crossTalkWork = 50 * time.Millisecond

// activeCall is one tools/call in flight.
type activeCall struct {
	overlapped bool // another tools/call was in flight at some point of this one's life
}

// faultHandler is the fault-injection middleware. It lets everything but tools/call (and the
// slow handshake) through to next untouched.
type faultHandler struct {
	b    *Backend
	next handler
}

func (f *faultHandler) handle(ctx context.Context, p peer, req *request) *response {
	o := &f.b.opts
	if req.isNotification() {
		return f.next.handle(ctx, p, req)
	}
	if resp, handled := f.fuzzBug(ctx, p, req); handled {
		return resp
	}
	switch req.Method {
	case "initialize", "server/discover":
		if o.SlowInitialize > 0 {
			// A slow start: ready SlowInitialize after the first handshake request.
			if wait := o.SlowInitialize - f.b.startClock.since(); wait > 0 && !f.sleep(ctx, wait) {
				return nil
			}
		}
		return f.next.handle(ctx, p, req)
	case "tools/call":
	default:
		return f.next.handle(ctx, p, req)
	}

	if f.b.workers != nil {
		// At most cap(workers) tools/calls at a time (one for Serialize).
		select {
		case f.b.workers <- struct{}{}:
			defer func() { <-f.b.workers }()
		case <-ctx.Done():
			return nil
		case <-f.b.ctx.Done():
			return nil
		}
	}

	if o.SerializeSession {
		// One tools/call of this session at a time.
		slot := p.session().slot()
		select {
		case slot <- struct{}{}:
			defer func() { <-slot }()
		case <-ctx.Done():
			return nil
		case <-f.b.ctx.Done():
			return nil
		}
	}

	n := req.seq
	ac, hangNow := f.enter()
	defer f.exit(ac)
	if o.LazyInitDeadlock > 0 && !f.lazyInit(ctx) {
		f.hang(ctx)
		return nil
	}

	if o.LeakKBPerCall > 0 {
		f.leakKB(o.LeakKBPerCall)
	}
	if (o.HangFirstCall && n == 1) || hangNow {
		f.hang(ctx)
		return nil
	}
	if o.CrashRate > 0 && FlakyRoll(o.Seed, n) < o.CrashRate {
		f.b.crashes.Add(1)
		f.b.log.Info("simulated crash", "call", n)
		if o.Crash != nil {
			o.Crash()
		}
		return &response{abort: true}
	}
	if !f.slowDown(ctx, n) {
		return nil
	}
	if o.ErrorCycle {
		f.b.faults.mu.Lock()
		code := errorCycleCodes[f.b.faults.cycle%len(errorCycleCodes)]
		f.b.faults.cycle++
		f.b.faults.mu.Unlock()
		return errorResponse(req, newError(code, "synthetic error from the error cycle (code %d)", code))
	}

	resp := f.next.handle(ctx, p, req)
	if resp == nil || ctx.Err() != nil {
		return resp
	}
	if o.HangWhenConcurrent && f.overlapped(ac) {
		f.hang(ctx)
		return nil
	}
	if o.Divergent && f.overlapped(ac) {
		f.diverge(resp)
	}
	if o.CrossTalk && !f.crossTalk(ctx, resp) {
		return nil
	}
	return f.corrupt(resp)
}

// lazyInit runs LazyInitDeadlock's initialization on the first tools/call and reports whether
// the call may go on; false means it deadlocked.
func (f *faultHandler) lazyInit(ctx context.Context) bool {
	fs := &f.b.faults
	fs.mu.Lock()
	switch fs.lazy {
	case lazyDone:
		fs.mu.Unlock()
		return true
	case lazyRunning, lazyDeadlocked:
		// The initializer holds the resource's lock and waits for ours: neither moves again.
		fs.lazy = lazyDeadlocked
		fs.mu.Unlock()
		return false
	}
	fs.lazy = lazyRunning
	fs.mu.Unlock()
	if !f.sleep(ctx, f.b.opts.LazyInitDeadlock) {
		return false
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.lazy == lazyDeadlocked {
		return false
	}
	fs.lazy = lazyDone
	return true
}

// crossTalk passes resp's first text through the shared buffer (see Options.CrossTalk); false
// means the call's context ended meanwhile.
func (f *faultHandler) crossTalk(ctx context.Context, resp *response) bool {
	r, ok := resp.Result.(*toolResult)
	if !ok || len(r.Content) == 0 {
		return true
	}
	fs := &f.b.faults
	fs.mu.Lock()
	fs.shared = r.Content[0].Text
	fs.mu.Unlock()
	if !f.sleep(ctx, crossTalkWork) {
		return false
	}
	fs.mu.Lock()
	r.Content[0].Text = fs.shared
	fs.mu.Unlock()
	return true
}

// sleep waits d, or less when the request's context or the Backend ends; it reports whether
// it slept the whole time.
func (f *faultHandler) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-f.b.ctx.Done():
	}
	return false
}

// hang blocks until the request's context or the Backend ends: a call never answered.
func (f *faultHandler) hang(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-f.b.ctx.Done():
	}
}

// enter registers a tools/call, marks overlaps, and reports whether HangWhenConcurrent must
// hang it at once.
func (f *faultHandler) enter() (*activeCall, bool) {
	fs := &f.b.faults
	in := f.b.inFlight.Add(1)
	for {
		m := f.b.maxInFlight.Load()
		if in <= m || f.b.maxInFlight.CompareAndSwap(m, in) {
			break
		}
	}
	ac := &activeCall{}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.active == nil {
		fs.active = make(map[*activeCall]struct{})
	}
	if len(fs.active) > 0 {
		for other := range fs.active {
			other.overlapped = true
		}
		ac.overlapped = true
	}
	fs.active[ac] = struct{}{}
	hang := f.b.opts.HangWhenConcurrent && (fs.deadlocked || ac.overlapped)
	if hang {
		fs.deadlocked = true
	}
	return ac, hang
}

func (f *faultHandler) exit(ac *activeCall) {
	f.b.inFlight.Add(-1)
	fs := &f.b.faults
	fs.mu.Lock()
	delete(fs.active, ac)
	fs.mu.Unlock()
}

func (f *faultHandler) overlapped(ac *activeCall) bool {
	fs := &f.b.faults
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if ac.overlapped && f.b.opts.HangWhenConcurrent {
		fs.deadlocked = true
	}
	return ac.overlapped
}

func (f *faultHandler) leakKB(kb int) {
	buf := make([]byte, kb<<10)
	for i := range buf { // touch every byte so the pages count in RSS
		buf[i] = byte(i)
	}
	fs := &f.b.faults
	fs.mu.Lock()
	fs.leak = append(fs.leak, buf)
	fs.mu.Unlock()
	f.b.leaked.Add(int64(len(buf)))
}

// diverge appends the racy counter to the answer.
func (f *faultHandler) diverge(resp *response) {
	fs := &f.b.faults
	fs.mu.Lock()
	fs.divergent++
	mark := fmt.Sprintf(" [divergent #%d]", fs.divergent)
	fs.mu.Unlock()
	switch {
	case resp.Error != nil:
		resp.Error.Message += mark
	default:
		if r, ok := resp.Result.(*toolResult); ok && len(r.Content) > 0 {
			r.Content[0].Text += mark
		}
	}
}

// corrupt applies WrongID, BothResultAndError, StrayAnswer, DuplicateAnswers and
// MalformedEvery, in that order.
func (f *faultHandler) corrupt(resp *response) *response {
	o := &f.b.opts
	if o.WrongID {
		resp.ID = shiftID(resp.ID)
	}
	if o.BothResultAndError {
		w := struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  any             `json:"result"`
			Error   *rpcError       `json:"error"`
		}{"2.0", resp.ID, resp.Result, resp.Error}
		if w.Result == nil {
			w.Result = map[string]any{}
		}
		if w.Error == nil {
			w.Error = newError(CodeInternalError, "this response also carries a result")
		}
		if b, err := json.Marshal(w); err == nil {
			resp.raw = b
		}
	}
	if o.StrayAnswer {
		stray := &response{ID: strayID(resp.ID), Result: &toolResult{Content: []content{{Type: "text", Text: "an answer to a request never made"}}}}
		resp.before = append(resp.before, stray.encode())
	}
	if o.DuplicateAnswers {
		resp.after = append(resp.after, resp.encode())
	}
	if o.MalformedEvery > 0 {
		fs := &f.b.faults
		fs.mu.Lock()
		fs.responses++
		hit := fs.responses%o.MalformedEvery == 0
		fs.mu.Unlock()
		if hit {
			resp.raw = truncateFrame(resp.encode(), resp.ID)
			f.b.malformed.Add(1)
		}
	}
	return resp
}

// truncateFrame cuts an encoded response half-way through its body, keeping the
// `{"jsonrpc":"2.0","id":<id>,` prefix intact so a client can still read the id.
func truncateFrame(enc []byte, id json.RawMessage) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	prefix := len(`{"jsonrpc":"2.0","id":`) + len(id) + 1
	if prefix >= len(enc)-1 {
		return enc[:len(enc)-1]
	}
	return enc[:prefix+(len(enc)-prefix)/2]
}

// strayID returns an id the client did not issue: an integer plus 1,000,000, a string with
// "+stray" appended.
func strayID(id json.RawMessage) json.RawMessage {
	if n, err := strconv.ParseInt(string(id), 10, 64); err == nil {
		return json.RawMessage(strconv.FormatInt(n+1_000_000, 10))
	}
	var s string
	if json.Unmarshal(id, &s) == nil {
		b, _ := json.Marshal(s + "+stray")
		return b
	}
	return json.RawMessage("1000000")
}

// shiftID returns id off by 1000: an integer plus 1000, a string with "+1000" appended.
func shiftID(id json.RawMessage) json.RawMessage {
	if n, err := strconv.ParseInt(string(id), 10, 64); err == nil {
		return json.RawMessage(strconv.FormatInt(n+1000, 10))
	}
	var s string
	if json.Unmarshal(id, &s) == nil {
		b, _ := json.Marshal(s + "+1000")
		return b
	}
	return id
}
