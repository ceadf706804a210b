package mcptest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// JSON-RPC and MCP error codes the server answers with.
const (
	CodeParseError         = -32700
	CodeInvalidRequest     = -32600
	CodeMethodNotFound     = -32601
	CodeInvalidParams      = -32602
	CodeInternalError      = -32603
	CodeServerError        = -32000 // implementation-defined: a tool failed (error tool, flaky)
	CodeRequestTimeout     = -32001 // implementation-defined: the error tool's "timeout" category
	CodeResourceNotFound   = -32002 // legacy era only; the stateless era answers -32602
	CodeUnauthorized       = -32003 // implementation-defined: the error tool's "auth" category
	CodeHeaderMismatch     = -32020
	CodeMissingCapability  = -32021
	CodeUnsupportedVersion = -32022
)

// request is one decoded JSON-RPC message from the client. Only the envelope is decoded;
// params stay raw until a method handler asks for them.
type request struct {
	// ID is the raw id ("1", `"abc"`); nil for a notification.
	ID     json.RawMessage
	Method string
	Params json.RawMessage
	// seq numbers tools/calls from 1 in arrival order across the Backend; 0 until admitted.
	seq int64
}

// isNotification reports whether the message expects no answer.
func (r *request) isNotification() bool { return r.ID == nil }

// idKey is the id as a map key (its raw bytes).
func (r *request) idKey() string { return string(r.ID) }

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message) }

func newError(code int, format string, args ...any) *rpcError {
	return &rpcError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// response is what a handler returns for a request. A nil *response means "write nothing".
type response struct {
	ID     json.RawMessage
	Result any
	Error  *rpcError
	// raw, when set, is written verbatim instead of encoding the fields (fault injection).
	raw []byte
	// abort asks the transport to drop the connection abruptly without writing anything: the
	// in-process form of a crash.
	abort bool
	// before and after are extra frames written around the response, in that order, on the
	// same stream (fault injection: stray and duplicate answers).
	before, after [][]byte
}

// frames returns every frame the response is written as: before, itself, after.
func (r *response) frames() [][]byte {
	out := make([][]byte, 0, len(r.before)+1+len(r.after))
	out = append(out, r.before...)
	out = append(out, r.encode())
	return append(out, r.after...)
}

// extra reports whether the response carries frames besides itself.
func (r *response) extra() bool { return len(r.before)+len(r.after) > 0 }

// wireResponse fixes the field order on the wire: jsonrpc, id, then result or error, so a
// truncated frame still starts with the id.
type wireResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// encode returns the response's bytes, without a trailing newline.
func (r *response) encode() []byte {
	if r.raw != nil {
		return r.raw
	}
	id := r.ID
	if id == nil {
		id = json.RawMessage("null")
	}
	w := wireResponse{JSONRPC: "2.0", ID: id, Error: r.Error}
	if r.Error == nil {
		w.Result = r.Result
		if w.Result == nil {
			w.Result = struct{}{}
		}
	}
	b, err := json.Marshal(w)
	if err != nil {
		fallback := wireResponse{JSONRPC: "2.0", ID: id, Error: newError(CodeInternalError, "encode result: %v", err)}
		b, _ = json.Marshal(fallback)
	}
	return b
}

func resultResponse(req *request, result any) *response {
	return &response{ID: req.ID, Result: result}
}

func errorResponse(req *request, err *rpcError) *response {
	return &response{ID: req.ID, Error: err}
}

// encodeNotification returns one notification frame.
func encodeNotification(method string, params any) ([]byte, error) {
	b, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params,omitempty"`
	}{"2.0", method, params})
	if err != nil {
		return nil, fmt.Errorf("encode notification %s: %w", method, err)
	}
	return b, nil
}

// envelope is the decoded top level of one incoming frame.
type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// frameKind says what a decoded frame is.
type frameKind int

const (
	kindRequest frameKind = iota
	kindNotification
	kindResponse // a response from the client, to a request the server sent
	kindInvalid
)

// decodeFrame decodes one frame. For kindInvalid it returns the error response to send.
func decodeFrame(data []byte) (*request, frameKind, *response) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		return nil, kindInvalid, &response{Error: newError(CodeInvalidRequest, "batches are not supported")}
	}
	if !utf8.Valid(trimmed) {
		return nil, kindInvalid, &response{Error: newError(CodeParseError, "parse error: the message is not valid UTF-8")}
	}
	var env envelope
	if err := json.Unmarshal(trimmed, &env); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			// Valid JSON that is not a valid request object (a method that is not a string …).
			return nil, kindInvalid, &response{Error: newError(CodeInvalidRequest, "invalid request: %v", err)}
		}
		return nil, kindInvalid, &response{Error: newError(CodeParseError, "parse error: %v", err)}
	}
	id := env.ID
	if string(id) == "null" {
		id = nil
	}
	if id != nil && !validID(id) {
		return nil, kindInvalid, &response{Error: newError(CodeInvalidRequest, "id must be a string or an integer")}
	}
	if env.Method == nil {
		if env.Result != nil || env.Error != nil {
			return nil, kindResponse, nil
		}
		return nil, kindInvalid, &response{ID: id, Error: newError(CodeInvalidRequest, "message has no method")}
	}
	if env.JSONRPC != "2.0" {
		return nil, kindInvalid, &response{ID: id, Error: newError(CodeInvalidRequest, `jsonrpc must be "2.0"`)}
	}
	req := &request{ID: id, Method: *env.Method, Params: env.Params}
	if id == nil {
		return req, kindNotification, nil
	}
	return req, kindRequest, nil
}

// validID reports whether raw is a JSON string or integer.
func validID(raw json.RawMessage) bool {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		return json.Unmarshal(raw, &s) == nil
	}
	_, err := strconv.ParseInt(string(raw), 10, 64)
	return err == nil
}

// requestMeta is the part of params._meta the server reads.
type requestMeta struct {
	ProtocolVersion *string `json:"io.modelcontextprotocol/protocolVersion"`
	ProgressToken   any     `json:"progressToken"`
}

// metaOf decodes params._meta; a missing or malformed _meta yields the zero value.
func metaOf(params json.RawMessage) requestMeta {
	var p struct {
		Meta requestMeta `json:"_meta"`
	}
	if len(params) > 0 {
		_ = json.Unmarshal(params, &p)
	}
	return p.Meta
}
