package session

import (
	"encoding/json"
	"strconv"
	"time"
)

// ServerRequest is a request the server sent the client: sampling/createMessage,
// elicitation/create or roots/list in the legacy era (ping is answered by the session), or one
// input request of a stateless-era input_required result (MRTR).
type ServerRequest struct {
	Method string
	// Params is the request's params as sent (nil when absent).
	Params json.RawMessage
	At     time.Time
	// Input marks an MRTR input request (stateless era); its answer goes into the retried
	// call's inputResponses instead of a JSON-RPC response.
	Input bool
}

// ClientReply is the client's answer to a [ServerRequest]: Result, or, when Code is not zero,
// a JSON-RPC error with Code and Message.
type ClientReply struct {
	Result  json.RawMessage
	Code    int
	Message string
}

// ClientCapabilities are client features to declare in the handshake (and in every
// stateless-era request's _meta) beyond those [Options]' canned replies imply. Declare only
// what an [Options.OnRequest] answers.
type ClientCapabilities struct {
	Roots, Sampling, Elicitation bool
}

// reply answers a server request: OnRequest first, then the canned replies. It runs on a
// goroutine of the session's (never the reader), or on the caller's for MRTR input requests.
func (s *Session) reply(r ServerRequest) ClientReply {
	if s.opts.OnRequest != nil {
		if rep, ok := s.opts.OnRequest(r); ok {
			return rep
		}
	}
	result, code, msg := s.answer(r.Method)
	return ClientReply{Result: result, Code: code, Message: msg}
}

// answer decides the canned reply to a server→client request: a result, or an error code and
// message.
func (s *Session) answer(method string) (json.RawMessage, int, string) {
	switch method {
	case "ping":
		return json.RawMessage("{}"), 0, ""
	case "roots/list":
		return s.rootsResult(), 0, ""
	case "sampling/createMessage":
		if s.opts.SamplingReply != nil {
			return s.opts.SamplingReply, 0, ""
		}
		return nil, -32601, "sampling/createMessage: this client declared no sampling capability (no canned sampling reply configured)"
	case "elicitation/create":
		if s.opts.ElicitationReply != nil {
			return s.opts.ElicitationReply, 0, ""
		}
		return nil, -32601, "elicitation/create: this client declared no elicitation capability (no canned elicitation reply configured)"
	}
	return nil, -32601, "method not found: " + strconv.Quote(method)
}
