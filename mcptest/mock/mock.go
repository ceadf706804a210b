package mock

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpspec/mcpspec/internal/clock"
	"github.com/mcpspec/mcpspec/session/recording"
	"github.com/mcpspec/mcpspec/session/recording/replay"
)

// Match is how a request finds its recorded answer.
type Match string

// The match modes.
const (
	// Exact answers a request with the answer to a recorded request of the same method and
	// params (ids, progress tokens and _meta aside): the first unused one, else the last used one.
	Exact Match = "exact"
	// ByMethod answers with the first unused answer of the same method, else the last one.
	ByMethod Match = "method"
	// Sequential expects the recorded requests in the recorded order: the next one must have
	// the same method, and its answer is given; anything else is refused and the order stays.
	Sequential Match = "sequential"
)

// Matches lists the match modes.
func Matches() []Match { return []Match{Exact, ByMethod, Sequential} }

// ErrorCode is the JSON-RPC error code of a request that matches no recorded one.
const ErrorCode = -32601

// Options tunes a mock. A nil *Options means [Exact] and no delay.
type Options struct {
	// Match is the match mode ("" = [Exact]).
	Match Match
	// Latency makes each answer wait as long as the recorded server took.
	Latency bool
}

// exchange is one recorded request and its answer.
type exchange struct {
	method  string
	params  json.RawMessage
	answer  []byte
	latency time.Duration
	used    bool
}

// Server answers requests from a recording. It is safe for concurrent use.
type Server struct {
	opts Options

	mu   sync.Mutex // guards ex's used flags and next
	ex   []*exchange
	next int // Sequential: the index of the next expected exchange
}

// New builds a mock of rec. A recording with no answered request is an error.
func New(rec *recording.Recording, o *Options) (*Server, error) {
	s := &Server{}
	if o != nil {
		s.opts = *o
	}
	if s.opts.Match == "" {
		s.opts.Match = Exact
	}
	if !slices.Contains(Matches(), s.opts.Match) {
		return nil, fmt.Errorf("mock: unknown match mode %q (exact, method or sequential)", s.opts.Match)
	}
	type pending struct {
		ex *exchange
		at time.Duration
	}
	open := map[string]pending{}
	for _, e := range rec.Entries {
		f, ok := parse(e.Frame)
		if !ok {
			continue
		}
		key := recording.IDKey(f.ID)
		switch {
		case e.Dir == recording.ClientToServer && f.Method != "" && key != "":
			x := &exchange{method: f.Method, params: f.Params}
			open[key] = pending{x, e.At()}
			s.ex = append(s.ex, x)
		case e.Dir == recording.ServerToClient && f.Method == "" && key != "":
			if p, ok := open[key]; ok {
				p.ex.answer, p.ex.latency = e.Frame, max(0, e.At()-p.at)
				delete(open, key)
			}
		}
	}
	s.ex = slices.DeleteFunc(s.ex, func(x *exchange) bool { return x.answer == nil })
	if len(s.ex) == 0 {
		return nil, fmt.Errorf("mock: the recording has no answered request")
	}
	return s, nil
}

type frame struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
}

func parse(b []byte) (frame, bool) {
	var f frame
	if len(b) == 0 || json.Unmarshal(b, &f) != nil {
		return f, false
	}
	return f, true
}

// noise are the params paths that never decide a match: progress tokens, and _meta (in the
// stateless era it carries the client's name, version and capabilities on every request).
var noise = func() []replay.Path {
	var out []replay.Path
	for _, s := range []string{"$..progressToken", "$._meta"} {
		p, _ := replay.ParsePath(s)
		out = append(out, p)
	}
	return out
}

// byMethodAlways are answered by method in every mode: the handshake and liveness.
var byMethodAlways = []string{"initialize", "server/discover", "ping"}

// Answer returns the answer to one frame the client sent: nil for a notification or a
// response (nothing to answer), else the recorded answer with the request's id, or a JSON-RPC
// error. With [Options.Latency] it waits the recorded time first (less if ctx ends).
func (s *Server) Answer(ctx context.Context, data []byte) []byte {
	f, ok := parse(data)
	if !ok {
		return errorFrame(nil, -32700, "mock: parse error: not a JSON-RPC message", nil)
	}
	if f.Method == "" || recording.IDKey(f.ID) == "" {
		return nil
	}
	x, miss := s.find(f)
	if x == nil {
		if f.Method == "ping" {
			return recording.WithID([]byte(`{"jsonrpc":"2.0","id":0,"result":{}}`), f.ID)
		}
		return errorFrame(f.ID, ErrorCode, miss.message, miss.data)
	}
	if s.opts.Latency && x.latency > 0 {
		_ = clock.Sleep(ctx, x.latency)
	}
	return recording.WithID(x.answer, f.ID)
}

// miss says why a request matched nothing.
type miss struct {
	message string
	data    map[string]any
}

func (s *Server) find(f frame) (*exchange, miss) {
	s.mu.Lock()
	defer s.mu.Unlock()
	mode := s.opts.Match
	if slices.Contains(byMethodAlways, f.Method) {
		mode = ByMethod
	}
	switch mode {
	case Sequential:
		for s.next < len(s.ex) && slices.Contains(byMethodAlways, s.ex[s.next].method) {
			s.next++ // the handshake was answered by method
		}
		if s.next >= len(s.ex) {
			return nil, miss{fmt.Sprintf("mock: %s after the end of the recording (sequential: all %d recorded requests were answered)", f.Method, len(s.ex)), nil}
		}
		x := s.ex[s.next]
		if x.method != f.Method {
			return nil, miss{fmt.Sprintf("mock: %s out of order: the recording's next request is %s (sequential)", f.Method, x.method),
				map[string]any{"expected": map[string]any{"method": x.method, "params": x.params}}}
		}
		s.next++
		x.used = true
		return x, miss{}
	case ByMethod:
		return s.pick(func(x *exchange) bool { return x.method == f.Method }), s.missing(f)
	}
	return s.pick(func(x *exchange) bool {
		return x.method == f.Method && len(replay.Diff(orEmpty(x.params), orEmpty(f.Params), noise())) == 0
	}), s.missing(f)
}

// pick returns the first unused exchange that fits, else the last used one that does.
func (s *Server) pick(fits func(*exchange) bool) *exchange {
	var last *exchange
	for _, x := range s.ex {
		if !fits(x) {
			continue
		}
		if !x.used {
			x.used = true
			return x
		}
		last = x
	}
	return last
}

func orEmpty(p json.RawMessage) []byte {
	if len(p) == 0 {
		return []byte("{}")
	}
	return p
}

// missing describes the nearest recorded request to f: the one of the same method whose
// params differ least, or the recorded methods when none has f's method.
func (s *Server) missing(f frame) miss {
	var best *exchange
	var bestChanges []replay.Change
	methods := map[string]bool{}
	for _, x := range s.ex {
		methods[x.method] = true
		if x.method != f.Method {
			continue
		}
		ch := replay.Diff(orEmpty(x.params), orEmpty(f.Params), noise())
		if best == nil || len(ch) < len(bestChanges) {
			best, bestChanges = x, ch
		}
	}
	if best == nil {
		names := make([]string, 0, len(methods))
		for m := range methods {
			names = append(names, m)
		}
		slices.Sort(names)
		return miss{fmt.Sprintf("mock: the recording has no %s request (it has %s)", f.Method, strings.Join(names, ", ")),
			map[string]any{"recordedMethods": names}}
	}
	paths := make([]string, 0, len(bestChanges))
	for i, c := range bestChanges {
		bestChanges[i].Path = strings.Replace(c.Path, "$", "$.params", 1) // paths in the request
		paths = append(paths, bestChanges[i].Path)
	}
	return miss{fmt.Sprintf("mock: no recorded %s has these params; the nearest differs at %s", f.Method, strings.Join(paths, ", ")),
		map[string]any{"nearest": map[string]any{"method": best.method, "params": best.params}, "differences": bestChanges}}
}

func errorFrame(id json.RawMessage, code int, msg string, data map[string]any) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	e := map[string]any{"code": code, "message": msg}
	if data != nil {
		e["data"] = data
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	return b
}
