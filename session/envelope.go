package session

import (
	"bytes"
	"unicode/utf8"
)

// envelope is the JSON-RPC envelope of one received frame. Members stay raw slices of the
// frame: result and params are decoded only when somebody asks.
type envelope struct {
	jsonrpc []byte // raw value of "jsonrpc", nil when absent
	id      []byte // raw value of "id", nil when absent
	method  []byte // raw value of "method" (a string token, quotes included), nil when absent
	params  []byte
	result  []byte
	err     []byte // raw value of "error"
}

// kind of message an envelope holds.
const (
	kindResponse = iota
	kindRequest
	kindNotification
)

func (e *envelope) kind() int {
	switch {
	case e.method == nil:
		return kindResponse
	case e.id == nil:
		return kindNotification
	default:
		return kindRequest
	}
}

// jsonrpcOK reports whether "jsonrpc" is exactly the string "2.0".
func (e *envelope) jsonrpcOK() bool {
	if string(e.jsonrpc) == `"2.0"` {
		return true
	}
	s, ok := unquote(e.jsonrpc)
	return ok && s == "2.0"
}

// methodName returns the decoded method, or "" when it is not a string.
func (e *envelope) methodName() string {
	s, _ := unquote(e.method)
	return s
}

// decodeEnvelope splits a frame into its envelope. It fails unless the frame is one valid
// UTF-8 JSON object; it never panics on any input.
func decodeEnvelope(data []byte) (envelope, error) {
	var env envelope
	if !utf8.Valid(data) {
		return env, errInvalidUTF8
	}
	err := eachMember(data, func(key, val []byte) {
		if len(key) < 4 {
			return
		}
		switch {
		case keyIs(key, "id"):
			env.id = val
		case keyIs(key, "jsonrpc"):
			env.jsonrpc = val
		case keyIs(key, "method"):
			env.method = val
		case keyIs(key, "result"):
			env.result = val
		case keyIs(key, "error"):
			env.err = val
		case keyIs(key, "params"):
			env.params = val
		}
	})
	return env, err
}

type envError string

func (e envError) Error() string { return string(e) }

const errInvalidUTF8 = envError("invalid UTF-8")

// salvageIDs returns, in order of appearance, the integers that follow an `"id":` in data. A
// frame that could not be decoded may still name the request it answers.
func salvageIDs(data []byte) []int64 {
	var ids []int64
	rest := data
	for len(ids) < 8 {
		k := bytes.Index(rest, []byte(`"id"`))
		if k < 0 {
			break
		}
		rest = rest[k+4:]
		i := skipSpace(rest, 0)
		if i >= len(rest) || rest[i] != ':' {
			continue
		}
		i = skipSpace(rest, i+1)
		j := i
		if j < len(rest) && rest[j] == '-' {
			j++
		}
		for j < len(rest) && isDigit(rest[j]) {
			j++
		}
		if n, ok := parseInt(rest[i:j]); ok {
			ids = append(ids, n)
		}
	}
	return ids
}
