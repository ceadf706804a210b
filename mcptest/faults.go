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
}

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
			if !f.sleep(ctx, o.SlowInitialize) {
				return nil
			}
		}
		return f.next.handle(ctx, p, req)
	case "tools/call":
	default:
		return f.next.handle(ctx, p, req)
	}

	n := req.seq
	ac, hangNow := f.enter()
	defer f.exit(ac)

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
	return f.corrupt(resp)
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

// corrupt applies WrongID, BothResultAndError and MalformedEvery, in that order.
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
