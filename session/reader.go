package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/session/transport"
)

// readLoop is the session's one reader: it receives frames until the connection ends.
func (s *Session) readLoop() {
	defer close(s.readerDone)
	for {
		f, err := s.conn.Recv()
		if err != nil {
			s.connEnded(err)
			return
		}
		if f.At.IsZero() {
			f.At = time.Now()
		}
		if f.StreamEnded() {
			// A signal of the transport, not bytes the server sent: no frame hook sees it.
			s.lostResponse(f)
			continue
		}
		if s.opts.OnFrame != nil {
			s.opts.OnFrame(Received, f)
		}
		s.handleFrame(f)
	}
}

// connEnded fails every pending call with the classified end of the connection.
func (s *Session) connEnded(err error) {
	s.mu.Lock()
	if s.sh.closing {
		s.mu.Unlock()
		return
	}
	e := classifyConnErr(err, s.conn)
	s.sh.dead = e
	pend := s.sh.pending
	s.sh.pending = make(map[int64]*call)
	s.mu.Unlock()
	s.failAll(pend, e)
}

// handleFrame routes one received frame. Nothing in it may panic on any input.
func (s *Session) handleFrame(f transport.Frame) {
	if f.Err != nil {
		s.framingFault(f)
		return
	}
	env, err := decodeEnvelope(f.Data)
	if err != nil {
		if i := skipSpace(f.Data, 0); i < len(f.Data) && f.Data[i] == '[' && utf8ValidJSON(f.Data) {
			// A JSON-RPC batch (2025-03-26): route each member on its own.
			_ = eachElement(f.Data, func(m []byte) {
				s.handleFrame(transport.Frame{Data: m, At: f.At})
			})
			return
		}
		s.malformed(f, err, "not a JSON object: "+err.Error())
		return
	}
	switch env.kind() {
	case kindResponse:
		s.response(&env, f)
	case kindNotification:
		s.notification(&env, f)
	default:
		s.serverRequest(&env, f)
	}
}

func utf8ValidJSON(b []byte) bool {
	end, err := skipValue(b, skipSpace(b, 0), 0)
	return err == nil && skipSpace(b, end) == len(b) && utf8.Valid(b)
}

// tooLargeHint is the hint of a message over the size limit.
const tooLargeHint = "raise the limit with --max-message-size (maxMessageSize: in a collection's server), e.g. 64MiB, or have the server send less at once (page large results)"

// framingFault handles a frame the transport could not frame. A frame over the size limit that
// names no request is most likely the answer to the one request pending, if there is just one:
// that request fails now rather than at its deadline.
func (s *Session) framingFault(f transport.Frame) {
	var fe *transport.FrameError
	if errors.As(f.Err, &fe) && fe.TooLong() != "" {
		s.malformedFrame(f, f.Err, fe.TooLong(), tooLargeHint, true)
		return
	}
	s.malformed(f, f.Err, "framing fault: "+f.Err.Error())
}

// lostResponse fails the call whose answer stream ended before its answer (the transport
// could not resume it) as Disconnected: the answer is lost, the session goes on. A call no
// longer pending (answered by a frame that was salvaged, given up) is left alone.
func (s *Session) lostResponse(f transport.Frame) {
	id, ok := parseInt(f.ReplyTo)
	if !ok {
		return
	}
	s.mu.Lock()
	c, found := s.sh.pending[id]
	if found {
		delete(s.sh.pending, id)
	}
	s.mu.Unlock()
	if !found {
		return
	}
	c.fail = &Error{Category: Disconnected, Message: "the server ended the response stream before the response, with nothing to resume it from: the response is lost (the session goes on)", Err: f.Err}
	c.at = f.At
	c.done <- struct{}{}
}

// malformed fails the call named by a salvaged id, or records an unroutable finding.
func (s *Session) malformed(f transport.Frame, cause error, msg string) {
	s.malformedFrame(f, cause, msg, "", false)
}

// malformedFrame is malformed with a hint; soleCall routes a frame that names no request to the
// one pending call, when only one is pending.
func (s *Session) malformedFrame(f transport.Frame, cause error, msg, hint string, soleCall bool) {
	frame := excerpt(f.Data)
	var c *call
	s.mu.Lock()
	for _, id := range salvageIDs(f.Data) {
		if p, ok := s.sh.pending[id]; ok {
			c = p
			delete(s.sh.pending, id)
			break
		}
	}
	if id, ok := parseInt(f.ReplyTo); c == nil && ok {
		// The transport knows which request this answers (an HTTP POST's body).
		if p, found := s.sh.pending[id]; found {
			c = p
			delete(s.sh.pending, id)
		}
	}
	if c == nil && soleCall && len(s.sh.pending) == 1 {
		for id, p := range s.sh.pending {
			c = p
			delete(s.sh.pending, id)
		}
	}
	if c == nil {
		if len(s.sh.unroutable) >= maxUnroutable {
			s.sh.unroutable = s.sh.unroutable[1:]
		}
		s.sh.unroutable = append(s.sh.unroutable, unroutable{at: f.At, category: Malformed, message: msg, hint: hint, frame: frame, err: cause})
	}
	s.mu.Unlock()
	if c == nil {
		s.finding(Finding{Category: Malformed, Message: "unroutable malformed frame: " + msg, Frame: frame, At: f.At})
		return
	}
	c.fail = &Error{Category: Malformed, Message: msg, Hint: hint, Frame: frame, Err: cause}
	c.at = f.At
	c.done <- struct{}{}
}

// response routes a response to its pending call.
func (s *Session) response(env *envelope, f transport.Frame) {
	id, ok := parseInt(env.id)
	if !ok {
		s.oddID(env, f)
		return
	}
	s.mu.Lock()
	c, found := s.sh.pending[id]
	if found {
		delete(s.sh.pending, id)
		if c.linger && env.result != nil && env.err == nil {
			// Moved under the same lock as the call leaves pending, so no progress that follows
			// the answer finds neither.
			s.lingerProgress(id, c.progress)
		}
	}
	var late Category
	var wasAbandoned bool
	if !found {
		late, wasAbandoned = s.sh.abandoned.take(id)
	}
	s.mu.Unlock()
	if !found {
		if wasAbandoned && late == lateExpected {
			return // the handshake's losing request: its answer is expected and not a finding
		}
		var msg string
		switch {
		case wasAbandoned:
			msg = fmt.Sprintf("late response to request %d, which already ended as %s", id, late)
		case id > 0 && id <= s.nextID.Load():
			msg = fmt.Sprintf("response for id %d, which is not pending (duplicate, or a raw request's)", id)
		default:
			msg = fmt.Sprintf("response with unknown id %d (never issued)", id)
			// A pending call that then times out was most likely answered under the wrong id:
			// blame this frame rather than report a bare Timeout.
			s.mu.Lock()
			if len(s.sh.unroutable) >= maxUnroutable {
				s.sh.unroutable = s.sh.unroutable[1:]
			}
			s.sh.unroutable = append(s.sh.unroutable, unroutable{at: f.At, category: ProtocolError, message: msg, frame: excerpt(f.Data)})
			s.mu.Unlock()
		}
		s.finding(Finding{Category: ProtocolError, Message: msg, Frame: excerpt(f.Data), At: f.At})
		return
	}
	c.at = f.At
	switch {
	case !env.jsonrpcOK():
		c.fail = protoErr(f, "the jsonrpc member is "+describe(env.jsonrpc)+", not \"2.0\"")
	case env.result != nil && env.err != nil:
		c.fail = protoErr(f, "the response has both result and error")
	case env.err != nil:
		c.fail = decodeRPCError(env.err, f)
	case env.result == nil:
		c.fail = protoErr(f, "the response has neither result nor error")
	default:
		c.result = env.result
	}
	c.done <- struct{}{}
}

// oddID handles a response whose id is missing, null, a string or not an integer.
func (s *Session) oddID(env *envelope, f transport.Frame) {
	var msg string
	switch {
	case env.id == nil:
		msg = "a response without an id"
	case string(env.id) == "null":
		msg = "a response with a null id"
	default:
		msg = "a response with id " + describe(env.id) + " (the client sends only integers)"
	}
	if env.err != nil {
		if e := decodeRPCError(env.err, f); e.Code != 0 {
			msg += fmt.Sprintf(" carrying error %d: %s", e.Code, e.Message)
		}
	}
	// A string id that spells a pending integer id names its call: fail that one.
	if str, ok := unquote(env.id); ok {
		if n, err := strconv.ParseInt(str, 10, 64); err == nil {
			s.mu.Lock()
			c, found := s.sh.pending[n]
			if found {
				delete(s.sh.pending, n)
			}
			s.mu.Unlock()
			if found {
				c.at = f.At
				c.fail = protoErr(f, "the response id is the string "+string(env.id)+"; the request's id was the integer "+str)
				c.done <- struct{}{}
				return
			}
		}
	}
	frame := excerpt(f.Data)
	s.mu.Lock()
	if len(s.sh.unroutable) >= maxUnroutable {
		s.sh.unroutable = s.sh.unroutable[1:]
	}
	s.sh.unroutable = append(s.sh.unroutable, unroutable{at: f.At, category: ProtocolError, message: msg, frame: frame})
	s.mu.Unlock()
	s.finding(Finding{Category: ProtocolError, Message: "unroutable " + msg, Frame: frame, At: f.At})
}

func protoErr(f transport.Frame, msg string) *Error {
	return &Error{Category: ProtocolError, Message: msg, Frame: excerpt(f.Data), Hint: protoHint}
}

// protoHint is the hint of a response that breaks JSON-RPC 2.0: the fault is the server's.
const protoHint = "the server's response breaks JSON-RPC 2.0 (see Error.Frame); this is a bug in the server, not in the request"

// decodeRPCError classifies a JSON-RPC error object.
func decodeRPCError(raw []byte, f transport.Frame) *Error {
	var code, msg, data []byte
	err := eachMember(raw, func(k, v []byte) {
		switch {
		case keyIs(k, "code"):
			code = v
		case keyIs(k, "message"):
			msg = v
		case keyIs(k, "data"):
			data = v
		}
	})
	if err != nil {
		return protoErr(f, "the error member is not an object")
	}
	n, ok := parseInt(code)
	if !ok || n < -1<<31 || n > 1<<31-1 {
		return protoErr(f, "the error code is "+describe(code)+", not an integer")
	}
	e := &Error{Category: ClassifyCode(int(n)), Code: int(n), Data: data}
	if m, ok := unquote(msg); ok {
		e.Message = m
	} else {
		e.Message = "(error without a message string)"
		e.Frame = excerpt(f.Data)
	}
	if e.Code == 0 {
		e.Category = ProtocolError
		e.Frame = excerpt(f.Data)
	}
	return e
}

// notification delivers a server notification and routes progress to its call.
func (s *Session) notification(env *envelope, f transport.Frame) {
	method := env.methodName()
	if !env.jsonrpcOK() {
		s.finding(Finding{Category: ProtocolError, Message: "notification " + strconv.Quote(method) + " with jsonrpc " + describe(env.jsonrpc), Frame: excerpt(f.Data), At: f.At})
	}
	switch {
	case env.params == nil:
	case method == "notifications/progress":
		s.progress(env.params)
	case method == "notifications/tasks/status":
		s.taskStatus(env.params)
	}
	if s.opts.OnNotification != nil {
		s.opts.OnNotification(Notification{Method: method, Params: env.params, At: f.At})
	}
}

func (s *Session) progress(params []byte) {
	var token, prog, total, msg []byte
	if eachMember(params, func(k, v []byte) {
		switch {
		case keyIs(k, "progressToken"):
			token = v
		case keyIs(k, "progress"):
			prog = v
		case keyIs(k, "total"):
			total = v
		case keyIs(k, "message"):
			msg = v
		}
	}) != nil {
		return
	}
	id, ok := parseInt(token)
	if !ok {
		return
	}
	s.mu.Lock()
	var fn func(Progress)
	var route *progressRoute
	if c := s.sh.pending[id]; c != nil {
		fn = c.progress
		c.life.Store(time.Now().UnixNano())
	} else {
		route = s.sh.lingering[id]
	}
	s.mu.Unlock()
	if fn == nil && route == nil {
		return
	}
	var p Progress
	p.Progress, _ = strconv.ParseFloat(string(prog), 64)
	if total != nil {
		p.Total, _ = strconv.ParseFloat(string(total), 64)
	}
	p.Message, _ = unquote(msg)
	if route != nil {
		route.deliver(p)
		return
	}
	fn(p)
}

// serverRequest answers a server→client request on a goroutine the session owns, so a slow
// Send never stalls the reader.
func (s *Session) serverRequest(env *envelope, f transport.Frame) {
	method := env.methodName()
	id := append([]byte(nil), env.id...)
	if !env.jsonrpcOK() {
		s.finding(Finding{Category: ProtocolError, Message: "request " + strconv.Quote(method) + " with jsonrpc " + describe(env.jsonrpc), Frame: excerpt(f.Data), At: f.At})
	}
	var params json.RawMessage
	if env.params != nil {
		params = append(json.RawMessage(nil), env.params...)
	}
	s.mu.Lock()
	closing := s.sh.closing
	if !closing {
		s.replies.Add(1)
	}
	s.mu.Unlock()
	if closing {
		return
	}
	go func() {
		defer s.replies.Done()
		// The reply is decided here, not on the reader: an OnRequest may take its time.
		rep := ClientReply{Result: json.RawMessage("{}")}
		if method != "ping" {
			rep = s.reply(ServerRequest{Method: method, Params: params, At: f.At})
		}
		result := rep.Result
		if rep.Code == 0 && params != nil {
			result = withRelatedTask(result, params)
		}
		if rep.Code == 0 && !json.Valid(result) {
			rep.Code, rep.Message = -32603, "the client's reply to "+strconv.Quote(method)+" is not valid JSON"
		}
		b := make([]byte, 0, 64+len(id)+len(result)+len(rep.Message))
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = append(b, id...)
		if rep.Code != 0 {
			b = append(b, `,"error":{"code":`...)
			b = appendInt(b, int64(rep.Code))
			b = append(b, `,"message":`...)
			b = appendString(b, rep.Message)
			b = append(b, "}}"...)
		} else {
			b = append(b, `,"result":`...)
			b = append(b, result...)
			b = append(b, '}')
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.RequestTimeout)
		defer cancel()
		if err := s.send(ctx, b); err != nil && !errors.Is(err, transport.ErrClosed) {
			s.finding(Finding{Category: Disconnected, Message: "could not answer the server's " + strconv.Quote(method) + ": " + err.Error(), At: time.Now()})
		}
	}()
}

// withRelatedTask returns result with the related-task `_meta` of a server request's params
// added: an answer to a request a task made carries the task's id, as 2025-11-25 asks of every
// message related to a task. Without one, result is returned unchanged.
func withRelatedTask(result json.RawMessage, params []byte) json.RawMessage {
	var related []byte
	_ = eachMember(params, func(k, v []byte) {
		if keyIs(k, "_meta") {
			_ = eachMember(v, func(mk, mv []byte) {
				if keyIs(mk, RelatedTaskMetaKey) {
					related = mv
				}
			})
		}
	})
	if related == nil {
		return result
	}
	meta := appendString(nil, RelatedTaskMetaKey)
	meta = append(meta, ':')
	meta = append(meta, related...)
	return appendParams(nil, result, false, meta, 0, nil)
}

func (s *Session) rootsResult() json.RawMessage {
	b := []byte(`{"roots":`)
	roots := s.opts.Roots
	if roots == nil {
		roots = []Root{}
	}
	r, _ := json.Marshal(roots)
	b = append(b, r...)
	return append(b, '}')
}

// describe renders a raw JSON value for a message ("absent" when nil).
func describe(raw []byte) string {
	if raw == nil {
		return "absent"
	}
	return textfmt.Excerpt(raw, 40)
}

func excerpt(b []byte) []byte {
	if len(b) > transport.ExcerptSize {
		b = b[:transport.ExcerptSize]
	}
	return append([]byte(nil), b...)
}

func appendInt(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) }
