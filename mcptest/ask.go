package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// MaxAskWait bounds how long the ask and roots tools wait for the client's answer to the
// request they send, on top of the call's own context.
const MaxAskWait = 30 * time.Second

// errNoChannel is returned when a request's transport has no way to reach the client.
var errNoChannel = errors.New("this request has no stream on which the server can send the client a request")

// clientReply is the client's answer to a request the server sent.
type clientReply struct {
	Result json.RawMessage
	Error  *rpcError
}

// outgoing tracks the server's requests awaiting the client's answer on one connection or
// session.
type outgoing struct {
	mu   sync.Mutex // guards next and m
	next int64
	m    map[string]chan clientReply
}

// open allocates a request id (a JSON string, so it never collides with the client's own
// numbering in a trace) and the channel its answer arrives on.
func (o *outgoing) open() (json.RawMessage, chan clientReply) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = make(map[string]chan clientReply)
	}
	o.next++
	id := json.RawMessage(strconv.Quote("mcptest-" + strconv.FormatInt(o.next, 10)))
	ch := make(chan clientReply, 1)
	o.m[string(id)] = ch
	return id, ch
}

func (o *outgoing) forget(id json.RawMessage) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.m, string(id))
}

// deliver hands a client's answer to the request waiting for it; an answer nobody waits for
// (unknown id, a request that gave up) is dropped.
func (o *outgoing) deliver(data []byte) {
	var env envelope
	if json.Unmarshal(data, &env) != nil {
		return
	}
	reply := clientReply{Result: env.Result}
	if env.Error != nil {
		reply.Error = &rpcError{}
		if json.Unmarshal(env.Error, reply.Error) != nil {
			reply.Error = newError(CodeInvalidRequest, "malformed error object: %s", env.Error)
		}
	}
	o.mu.Lock()
	ch := o.m[string(env.ID)]
	delete(o.m, string(env.ID))
	o.mu.Unlock()
	if ch != nil {
		ch <- reply // buffered: never blocks
	}
}

// roundTrip sends one request with send and waits for its answer, at most MaxAskWait.
func (o *outgoing) roundTrip(ctx context.Context, method string, params any, send func([]byte) error) (json.RawMessage, error) {
	id, ch := o.open()
	defer o.forget(id)
	data, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  any             `json:"params,omitempty"`
	}{"2.0", id, method, params})
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", method, err)
	}
	if err := send(data); err != nil {
		return nil, fmt.Errorf("send %s: %w", method, err)
	}
	t := time.NewTimer(MaxAskWait)
	defer t.Stop()
	select {
	case r := <-ch:
		if r.Error != nil {
			return nil, r.Error
		}
		return r.Result, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the answer to %s: %w", method, ctx.Err())
	case <-t.C:
		return nil, fmt.Errorf("no answer to %s within %v", method, MaxAskWait)
	}
}

// askKinds maps the ask tool's kind to the client capability it needs and the method it sends.
var askKinds = map[string]struct{ capability, method string }{
	"elicitation": {"elicitation", "elicitation/create"},
	"sampling":    {"sampling", "sampling/createMessage"},
	"roots":       {"roots", "roots/list"},
}

// askParams returns the params of the request the ask tool sends.
func askParams(kind, message string) any {
	switch kind {
	case "elicitation":
		return map[string]any{
			"message": message,
			"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{
				"answer": map[string]any{"type": "string", "description": "Your answer."},
			}},
		}
	case "sampling":
		return map[string]any{
			"messages":  []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": message}}},
			"maxTokens": 100,
		}
	}
	return nil
}

// askClient sends the client one request of the given kind during a tools/call and returns
// the client's result, or a tool error when the client did not declare the capability, gave
// a JSON-RPC error or no answer.
func askClient(tc *toolCall, tool, kind, message string) *toolResult {
	k := askKinds[kind]
	if !tc.peer.session().hasCapability(k.capability) {
		return toolError(fmt.Sprintf("%s: the client did not declare the %s capability, so the server cannot send %s", tool, k.capability, k.method))
	}
	res, err := tc.peer.request(tc.ctx, k.method, askParams(kind, message))
	var rerr *rpcError
	switch {
	case errors.As(err, &rerr):
		return toolError(fmt.Sprintf("%s: the client answered %s with error %d: %s", tool, k.method, rerr.Code, rerr.Message))
	case err != nil:
		return toolError(fmt.Sprintf("%s: %v", tool, err))
	}
	r := textResult(string(res))
	var obj map[string]any
	if json.Unmarshal(res, &obj) == nil {
		r.StructuredContent = obj
	}
	return r
}

func runAsk(_ *Backend, tc *toolCall) (*toolResult, *rpcError) {
	kind, err := tc.args.str("kind", false, "elicitation")
	if err != nil {
		return invalidArgs("ask", err)
	}
	if _, ok := askKinds[kind]; !ok {
		return invalidArgs("ask", fmt.Errorf("kind must be elicitation, sampling or roots; got %q", kind))
	}
	message, err := tc.args.str("message", false, "mcptest asks")
	if err != nil {
		return invalidArgs("ask", err)
	}
	return askClient(tc, "ask", kind, message), nil
}

func runRoots(_ *Backend, tc *toolCall) (*toolResult, *rpcError) {
	return askClient(tc, "roots", "roots", ""), nil
}
