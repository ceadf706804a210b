package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpspec/mcpspec/session/recording"
	"github.com/mcpspec/mcpspec/session/transport"
)

// Status is how a replayed answer compares with the recorded one.
type Status string

// The statuses of a replayed request.
const (
	// Matched: the answer equals the recorded one (ignored paths aside).
	Matched Status = "matched"
	// Changed: the answer differs; Changes lists where.
	Changed Status = "changed"
	// Added: the server answered a request the recording has no answer to.
	Added Status = "added"
	// Removed: the recording has an answer and the server gave none in time.
	Removed Status = "removed"
)

// DefaultTimeout is how long Run waits for each recorded answer by default.
const DefaultTimeout = 10 * time.Second

// DefaultIgnore are the paths every replay leaves out: progress tokens, which a client picks
// anew each time and which are transport noise rather than the server's answer.
func DefaultIgnore() []string { return []string{"$..progressToken"} }

// Options tunes a replay. A nil *Options means defaults.
type Options struct {
	// Ignore are paths (see [ParsePath]) left out of every comparison, in addition to
	// [DefaultIgnore].
	Ignore []Path
	// Timeout is how long to wait for the answer to a request that has one recorded (0 =
	// [DefaultTimeout]).
	Timeout time.Duration
	// UnansweredWait is how long to wait for the answer to a request the recording has no answer
	// to (0 = one second): such an answer is [Added].
	UnansweredWait time.Duration
}

// Result is the outcome of one replayed request.
type Result struct {
	// ID is the request's id as recorded (raw JSON).
	ID json.RawMessage `json:"id"`
	// Method is the request's method.
	Method string `json:"method"`
	// Status is how the answer compares.
	Status Status `json:"status"`
	// Changes lists the differences of a Changed answer.
	Changes []Change `json:"changes,omitempty"`
	// Recorded is the recorded answer; Replayed the one received now.
	Recorded json.RawMessage `json:"recorded,omitempty"`
	Replayed json.RawMessage `json:"replayed,omitempty"`
}

// Report is a whole replay.
type Report struct {
	Results []Result `json:"results"`
	// Counts are the results per status.
	Matched int `json:"matched"`
	Changed int `json:"changed"`
	Added   int `json:"added"`
	Removed int `json:"removed"`
	// Notifications is how many notifications (and client answers) were sent as recorded.
	Notifications int `json:"notifications"`
	// ServerRequests is how many requests the server made during the replay; Unanswered how
	// many of them the recording had no answer to (they got a JSON-RPC error).
	ServerRequests int `json:"serverRequests"`
	Unanswered     int `json:"unanswered"`
}

// Clean reports whether every answer matched.
func (r *Report) Clean() bool { return r.Changed == 0 && r.Added == 0 && r.Removed == 0 }

// frame is what a replay reads of a JSON-RPC message.
type frame struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
}

func parse(b []byte) (frame, bool) {
	var f frame
	if json.Unmarshal(b, &f) != nil {
		return f, false
	}
	return f, true
}

func (f frame) isRequest() bool  { return f.Method != "" && recording.IDKey(f.ID) != "" }
func (f frame) isResponse() bool { return f.Method == "" && recording.IDKey(f.ID) != "" }

// answerBook holds the client's recorded answers to the server's requests.
type answerBook struct {
	mu      sync.Mutex // guards entries
	entries []bookEntry
}

type bookEntry struct {
	method string
	params json.RawMessage
	answer []byte // the client's response frame as recorded
	used   bool
}

func newAnswerBook(rec *recording.Recording) *answerBook {
	asked := map[string]frame{} // recorded server requests by id
	b := &answerBook{}
	for _, e := range rec.Entries {
		f, ok := parse(e.Frame)
		if !ok || len(e.Frame) == 0 {
			continue
		}
		switch {
		case e.Dir == recording.ServerToClient && f.isRequest():
			asked[recording.IDKey(f.ID)] = f
		case e.Dir == recording.ClientToServer && f.isResponse():
			if q, ok := asked[recording.IDKey(f.ID)]; ok {
				b.entries = append(b.entries, bookEntry{method: q.Method, params: q.Params, answer: e.Frame})
				delete(asked, recording.IDKey(f.ID))
			}
		}
	}
	return b
}

// answer finds the recorded answer to a server request: the first unused one with the same
// method and params (progress tokens, _meta and ids aside), else the first unused one of the method.
func (b *answerBook) answer(req frame) ([]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	pick := -1
	for i, e := range b.entries {
		if e.used || e.method != req.Method {
			continue
		}
		if len(Diff(e.params, req.Params, []Path{progressTokens, metaPath})) == 0 {
			pick = i
			break
		}
		if pick < 0 {
			pick = i
		}
	}
	if pick < 0 {
		return nil, false
	}
	b.entries[pick].used = true
	return recording.WithID(b.entries[pick].answer, req.ID), true
}

var (
	progressTokens, _ = ParsePath("$..progressToken")
	metaPath, _       = ParsePath("$._meta")
)

// Run replays rec's client side over conn and compares the answers; it closes conn (stopping a
// child server) before it returns.
// An error means the replay could not go on (the connection failed, ctx ended); the report
// then holds what was compared so far, and every request not yet replayed is left out.
func Run(ctx context.Context, conn transport.Conn, rec *recording.Recording, o *Options) (*Report, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.UnansweredWait <= 0 {
		opts.UnansweredWait = time.Second
	}
	ignore := append([]Path{progressTokens}, opts.Ignore...)

	// Recorded answers by request id, consumed in order (a recording may reuse an id, one
	// session after another).
	answers := map[string][][]byte{}
	for _, e := range rec.Entries {
		if e.Dir != recording.ServerToClient || len(e.Frame) == 0 {
			continue
		}
		if f, ok := parse(e.Frame); ok && f.isResponse() {
			answers[recording.IDKey(f.ID)] = append(answers[recording.IDKey(f.ID)], e.Frame)
		}
	}
	r := &replayer{conn: conn, book: newAnswerBook(rec), waiting: map[string]chan []byte{}, done: make(chan struct{})}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); r.recvLoop(ctx) }()
	defer func() {
		_ = conn.Close() // ends recvLoop, which answers the server's requests until then
		wg.Wait()
	}()

	rep := &Report{Results: []Result{}}
	for _, e := range rec.Entries {
		if e.Dir != recording.ClientToServer || len(e.Frame) == 0 {
			continue
		}
		f, ok := parse(e.Frame)
		if !ok {
			continue
		}
		if f.isResponse() {
			continue // the client's answers are sent when the server asks again
		}
		if !f.isRequest() {
			if err := conn.Send(ctx, e.Frame); err != nil {
				return r.finish(rep), fmt.Errorf("replay: send %s: %w", f.Method, err)
			}
			rep.Notifications++
			continue
		}
		key := recording.IDKey(f.ID)
		var want []byte
		if q := answers[key]; len(q) > 0 {
			want, answers[key] = q[0], q[1:]
		}
		got, err := r.call(ctx, key, e.Frame, wait(want, opts))
		if err != nil {
			return r.finish(rep), err
		}
		if v := recording.InitializeVersion(got); v != "" {
			if vc, ok := conn.(transport.Versioned); ok {
				vc.SetProtocolVersion(v)
			}
		}
		res := Result{ID: f.ID, Method: f.Method, Recorded: want, Replayed: got}
		switch {
		case want == nil && got == nil:
			continue // unanswered then and now
		case want == nil:
			res.Status = Added
		case got == nil:
			res.Status = Removed
		default:
			res.Changes = Diff(want, got, ignore)
			res.Status = Matched
			if len(res.Changes) > 0 {
				res.Status = Changed
			}
		}
		rep.add(res)
	}
	return r.finish(rep), nil
}

func wait(want []byte, o Options) time.Duration {
	if want == nil {
		return o.UnansweredWait
	}
	return o.Timeout
}

func (rep *Report) add(r Result) {
	rep.Results = append(rep.Results, r)
	switch r.Status {
	case Matched:
		rep.Matched++
	case Changed:
		rep.Changed++
	case Added:
		rep.Added++
	case Removed:
		rep.Removed++
	}
}

// replayer owns the receiving side of a replay.
type replayer struct {
	conn transport.Conn
	book *answerBook

	mu       sync.Mutex // guards waiting, asked, unanswered
	waiting  map[string]chan []byte
	asked    int
	unanswer int
	recvErr  error // set before done is closed
	done     chan struct{}
}

func (r *replayer) finish(rep *Report) *Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	rep.ServerRequests, rep.Unanswered = r.asked, r.unanswer
	return rep
}

// call sends one request and waits up to d for its answer; nil when none came in time.
func (r *replayer) call(ctx context.Context, key string, req []byte, d time.Duration) ([]byte, error) {
	ch := make(chan []byte, 1)
	r.mu.Lock()
	r.waiting[key] = ch
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.waiting, key)
		r.mu.Unlock()
	}()
	if err := r.conn.Send(ctx, req); err != nil {
		var se *transport.StatusError
		if errors.As(err, &se) {
			// An HTTP refusal is the server's answer too: compare it as one.
			return errorFrame(req, se), nil
		}
		return nil, fmt.Errorf("replay: send request %s: %w", key, err)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case got := <-ch:
		return got, nil
	case <-t.C:
		return nil, nil
	case <-r.done:
		select {
		case got := <-ch:
			return got, nil
		default:
		}
		return nil, fmt.Errorf("replay: the server ended the connection: %w", r.recvErr)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// errorFrame stands for an HTTP refusal of req in the comparison.
func errorFrame(req []byte, se *transport.StatusError) []byte {
	f, _ := parse(req)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": f.ID,
		"error": map[string]any{"code": -32000, "message": fmt.Sprintf("HTTP %d", se.Status)}})
	return b
}

func (r *replayer) recvLoop(ctx context.Context) {
	defer close(r.done)
	for {
		fr, err := r.conn.Recv()
		if err != nil {
			r.recvErr = err
			return
		}
		if fr.Err != nil {
			continue
		}
		f, ok := parse(fr.Data)
		if !ok {
			continue
		}
		switch {
		case f.isResponse():
			r.mu.Lock()
			ch := r.waiting[recording.IDKey(f.ID)]
			delete(r.waiting, recording.IDKey(f.ID))
			r.mu.Unlock()
			if ch != nil {
				ch <- fr.Data
			}
		case f.isRequest():
			ans, ok := r.book.answer(f)
			r.mu.Lock()
			r.asked++
			if !ok {
				r.unanswer++
			}
			r.mu.Unlock()
			if !ok {
				ans, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": f.ID,
					"error": map[string]any{"code": -32601, "message": "replay: the recording has no answer to " + f.Method}})
			}
			sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_ = r.conn.Send(sctx, ans)
			cancel()
		}
	}
}
