package session

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// This file turns one logical call into one or more attempts on the wire: it encodes the
// frame (adding the stateless era's `_meta`), retries after a lost HTTP session (404), an
// unsupported protocol version (-32022) and MRTR input_required results.

// request is one logical call.
type request struct {
	method string
	// params is the raw params value, or nil for none. An object gains the `_meta` members.
	params []byte
	// plain says params is known to hold no `_meta` member (fast path).
	plain    bool
	progress func(Progress)
	timeout  time.Duration
	noHang   bool
	noCancel bool
	// noMeta skips the stateless `_meta` (initialize, and discover, which brings its own).
	noMeta bool
	// noRetry turns off re-initialize and version retries (the handshake's own requests).
	noRetry bool
	// quiet drops a late answer after the call is given up (see waitSpec.quiet).
	quiet bool
	// ids, when set, receives each attempt's request id once it is pending (see waitSpec.ids).
	ids *atomic.Int64
	// keepProgress keeps progress routed after a result answers the call (a task-augmented
	// tools/call, whose task goes on); the caller must then forget the route
	// (see [Session.forgetProgress]).
	keepProgress bool
	// header holds extra transport headers (a tools/call's Mcp-Param-*), sent with the
	// stateless era's attempts only; nil for none.
	header http.Header
}

// do runs r to completion. A Hang failure carries the late response in Error.Response.
func (s *Session) do(ctx context.Context, r *request) (*Response, *Error) {
	resp := new(Response)
	if e := s.run(ctx, r, resp); e != nil {
		return nil, e
	}
	return resp, nil
}

// run is [Session.do] filling resp, for callers that keep only parts of it (resp is meaningful
// only when run returns nil). Filling rather than returning a Response, and encoding each
// attempt in a function of its own, keep this frame small while the call waits (see
// [Session.roundTrip]).
func (s *Session) run(ctx context.Context, r *request, resp *Response) *Error {
	var (
		extra                []byte
		attempts, rounds     int
		reinit, versionRetry bool
		first                time.Time
	)
	timeout := r.timeout
	if timeout <= 0 {
		timeout = s.opts.RequestTimeout
	}
	w := waitSpec{method: r.method, timeout: timeout, noHang: r.noHang, noCancel: r.noCancel, quiet: r.quiet, ids: r.ids,
		keepProgress: r.keepProgress}
	for {
		id := s.nextID.Add(1)
		attempts++
		st := s.state.Load()
		frame := r.encode(id, st, extra, &w)
		e := s.roundTrip(ctx, id, frame, &w, r.progress, resp)
		if first.IsZero() {
			first = resp.Timing.Sent
		}
		if e != nil {
			if !r.noRetry && !reinit && sessionGone(e) && st.era == EraLegacy {
				reinit = true
				if err := s.reinitialize(ctx, st.gen); err == nil {
					continue
				}
			}
			if !r.noRetry && !versionRetry && e.Code == -32022 && st.era == EraStateless {
				versionRetry = true
				if s.adoptVersion(e.Data) {
					continue
				}
			}
			if e.Category == Hang && resp.Result != nil {
				e.Response = &Response{ID: id, Result: resp.Result, Timing: resp.Timing, Attempts: attempts}
				e.Response.Timing.spanFrom(first)
			}
			return e
		}
		if st.era == EraStateless && needsInput(resp.Result) {
			rounds++
			if extra, e = s.nextRound(resp.Result, rounds); e != nil {
				e.Method, e.ID, e.Elapsed = r.method, id, time.Since(first)
				return e
			}
			continue
		}
		resp.ID, resp.Attempts = id, attempts
		resp.Timing.spanFrom(first)
		return nil
	}
}

// encode encodes the attempt of r with id under the negotiated state st (the stateless era's
// `_meta`, a progress token, MRTR's extra members) and sets w's headers for it.
func (r *request) encode(id int64, st *negotiated, extra []byte, w *waitSpec) []byte {
	meta := st.meta
	if r.noMeta || st.era != EraStateless {
		meta = nil
	}
	var progressID int64
	if r.progress != nil {
		progressID = id
	}
	w.header = nil
	if st.era == EraStateless {
		w.header = r.header
	}
	return encodeRequest(id, r, meta, progressID, extra)
}

// nextRound answers the input_required result res of MRTR round rounds (see
// [Session.inputResponses]), or fails once the rounds are past maxMRTR.
func (s *Session) nextRound(res []byte, rounds int) ([]byte, *Error) {
	if rounds > maxMRTR {
		return nil, &Error{Category: ServerError,
			Message: "the server kept answering input_required after " + strconv.Itoa(maxMRTR) + " rounds"}
	}
	return s.inputResponses(res)
}

// spanFrom stretches t, the last attempt's timing, back to first, the first attempt's send
// (zero: t stays).
func (t *Timing) spanFrom(first time.Time) {
	if first.IsZero() {
		return
	}
	t.Sent = first
	if !t.Received.IsZero() {
		t.Latency = t.Received.Sub(first)
	}
}

// encodeRequest builds the request frame.
func encodeRequest(id int64, r *request, meta []byte, progressID int64, extra []byte) []byte {
	b := make([]byte, 0, 64+len(r.method)+len(r.params)+len(meta)+len(extra))
	b = appendRequestHead(b, id, r.method)
	if r.params == nil && meta == nil && progressID == 0 && extra == nil {
		return append(b, '}')
	}
	b = append(b, `,"params":`...)
	b = appendParams(b, r.params, r.plain, meta, progressID, extra)
	return append(b, '}')
}

// appendParams appends params with the `_meta` members (meta, a progress token) and extra
// members added. A params value that is not an object is sent as is.
func appendParams(b, params []byte, plain bool, meta []byte, progressID int64, extra []byte) []byte {
	hasMeta := meta != nil || progressID != 0
	if params == nil {
		params, plain = []byte("{}"), true
	}
	i := skipSpace(params, 0)
	j := len(params)
	for j > i && isSpace(params[j-1]) {
		j--
	}
	if i >= j || params[i] != '{' || params[j-1] != '}' || (!hasMeta && extra == nil) {
		return append(b, params...)
	}
	if !plain && hasMeta && hasMember(params, "_meta") {
		return appendMergedMeta(b, params, meta, progressID, extra)
	}
	inner := bytes.TrimSpace(params[i+1 : j-1])
	b = append(b, '{')
	sep := false
	if hasMeta {
		b = append(b, `"_meta":{`...)
		b = appendMetaMembers(b, meta, progressID)
		b = append(b, '}')
		sep = true
	}
	if len(inner) > 0 {
		if sep {
			b = append(b, ',')
		}
		b = append(b, inner...)
		sep = true
	}
	if extra != nil {
		if sep {
			b = append(b, ',')
		}
		b = append(b, extra...)
	}
	return append(b, '}')
}

func appendMetaMembers(b, meta []byte, progressID int64) []byte {
	b = append(b, meta...)
	if progressID != 0 {
		if meta != nil {
			b = append(b, ',')
		}
		b = append(b, `"progressToken":`...)
		b = appendInt(b, progressID)
	}
	return b
}

func hasMember(obj []byte, name string) bool {
	found := false
	_ = eachMember(obj, func(k, _ []byte) {
		if keyIs(k, name) {
			found = true
		}
	})
	return found
}

// appendMergedMeta rebuilds params whose own `_meta` object gains the session's members first
// (a caller's own value for the same key comes later and wins with last-wins parsers).
func appendMergedMeta(b, params, meta []byte, progressID int64, extra []byte) []byte {
	b = append(b, '{')
	n := 0
	err := eachMember(params, func(k, v []byte) {
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, k...)
		b = append(b, ':')
		vi := skipSpace(v, 0)
		if !keyIs(k, "_meta") || vi >= len(v) || v[vi] != '{' {
			b = append(b, v...)
			return
		}
		b = append(b, '{')
		b = appendMetaMembers(b, meta, progressID)
		if inner := bytes.TrimSpace(v[vi+1 : len(v)-1]); len(inner) > 0 {
			b = append(b, ',')
			b = append(b, inner...)
		}
		b = append(b, '}')
	})
	if err != nil {
		return b
	}
	if extra != nil {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, extra...)
	}
	return append(b, '}')
}

// needsInput reports whether a stateless-era result is an MRTR input_required result.
func needsInput(res []byte) bool {
	if !bytes.Contains(res, []byte("input_required")) {
		return false
	}
	want := false
	_ = eachMember(res, func(k, v []byte) {
		if keyIs(k, "resultType") {
			s, _ := unquote(v)
			want = s == "input_required"
		}
	})
	return want
}

// inputResponses answers an input_required result's inputRequests from the canned replies and
// returns the members to add to the retried params: inputResponses and requestState, the latter
// echoed byte for byte.
func (s *Session) inputResponses(res []byte) ([]byte, *Error) {
	var reqs, state []byte
	_ = eachMember(res, func(k, v []byte) {
		switch {
		case keyIs(k, "inputRequests"):
			reqs = v
		case keyIs(k, "requestState"):
			state = v
		}
	})
	b := []byte(`"inputResponses":{`)
	n := 0
	var fail *Error
	if reqs != nil {
		if err := eachMember(reqs, func(k, v []byte) {
			if fail != nil {
				return
			}
			var method, params []byte
			_ = eachMember(v, func(mk, mv []byte) {
				switch {
				case keyIs(mk, "method"):
					method = mv
				case keyIs(mk, "params"):
					params = mv
				}
			})
			name, _ := unquote(method)
			reply, ferr := s.inputReply(name, params)
			if ferr != nil {
				fail = ferr
				return
			}
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = append(b, k...)
			b = append(b, ':')
			b = append(b, reply...)
		}); err != nil {
			return nil, &Error{Category: ProtocolError, Message: "input_required result with inputRequests that is not an object", Frame: excerpt(res)}
		}
	}
	if fail != nil {
		return nil, fail
	}
	b = append(b, '}')
	if state != nil {
		b = append(b, `,"requestState":`...)
		b = append(b, state...)
	}
	return b, nil
}

// inputReply answers one MRTR input request: OnRequest first, then the canned replies. A
// JSON-RPC error from OnRequest, or no reply at all, fails the call.
func (s *Session) inputReply(method string, params []byte) (json.RawMessage, *Error) {
	if s.opts.OnRequest != nil {
		r := ServerRequest{Method: method, Params: append(json.RawMessage(nil), params...), At: time.Now(), Input: true}
		if rep, ok := s.opts.OnRequest(r); ok {
			if rep.Code != 0 {
				return nil, &Error{Category: ServerError, Message: "the client has no answer to the server's input request " + strconv.Quote(method) + ": " + rep.Message,
					Hint: "add a client reply rule that matches this request"}
			}
			if !json.Valid(rep.Result) {
				return nil, &Error{Category: ProtocolError, Message: "the client's reply to the input request " + strconv.Quote(method) + " is not valid JSON"}
			}
			return rep.Result, nil
		}
	}
	switch method {
	case "elicitation/create":
		if s.opts.ElicitationReply != nil {
			return s.opts.ElicitationReply, nil
		}
	case "sampling/createMessage":
		if s.opts.SamplingReply != nil {
			return s.opts.SamplingReply, nil
		}
	case "roots/list":
		return s.rootsResult(), nil
	}
	return nil, &Error{Category: ServerError,
		Message: "the server needs input (" + strconv.Quote(method) + ") the client has no reply for",
		Hint:    "configure a canned reply (elicitation or sampling) for this test"}
}

// paramsPool holds scratch buffers for encoding params on the hot path.
var paramsPool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// rawParams turns a caller's params into raw JSON (nil stays nil).
func rawParams(params any) ([]byte, error) {
	switch p := params.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return p, nil
	case []byte:
		return p, nil
	}
	b, err := appendValue(nil, params)
	if err != nil {
		return nil, fmt.Errorf("session: encode params: %w", err)
	}
	return b, nil
}
