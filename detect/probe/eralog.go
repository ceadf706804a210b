package probe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"sync"

	"github.com/mcpspec/mcpspec/session/transport"
)

// Bounds of what an era log keeps.
const (
	maxLogged        = 20  // offending frames kept per kind
	maxNotifications = 500 // notifications kept for the capability check
)

// eraLog is what the server sent during one era, as the whole-era rows need it: frames that
// did not decode, responses that break JSON-RPC, and the requests and notifications the
// server sent. Every received frame of every session of the era passes through it.
type eraLog struct {
	mu sync.Mutex // guards d
	d  eraData
}

// eraData is the content of an era log.
type eraData struct {
	frames int
	// fragments are lines that look like pieces of a JSON message split across lines;
	// nonJSON are other lines that are not JSON; badUTF8 are frames that are not UTF-8;
	// otherBad are framing faults of other kinds (too long, truncated, bad SSE).
	fragments, nonJSON, badUTF8, otherBad tally
	// shape are responses that break the JSON-RPC 2.0 response rules.
	shape tally
	// requests are the methods of the requests the server sent, with an excerpt.
	requests []logged
	// notifications are the notifications the server sent.
	notifications []logNote
	// dropped counts notifications beyond maxNotifications.
	dropped int
}

// tally counts offending frames and keeps the first few.
type tally struct {
	n     int
	items []string
}

func (t *tally) add(s string) {
	t.n++
	if len(t.items) < maxLogged {
		t.items = append(t.items, s)
	}
}

// logged is one frame kept by method.
type logged struct {
	method string
	text   string
}

// logNote is one notification the server sent.
type logNote struct {
	method string
	params json.RawMessage
	text   string
}

// wireMessage is the envelope of a received frame.
type wireMessage struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// jsonFragment matches a line that looks like part of a JSON document broken over lines.
var jsonFragment = regexp.MustCompile(`^\s*([{}\[\]]|"[^"]*"\s*:|[}\]],?\s*$)|[{\[,]\s*$`)

// received logs one received frame.
func (l *eraLog) received(f transport.Frame) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.d.frames++
	text := frameText(f)
	if f.Err != nil {
		var fe *transport.FrameError
		if errors.As(f.Err, &fe) && fe.Reason == "invalid-utf8" {
			l.d.badUTF8.add(text)
		} else {
			l.d.otherBad.add(text)
		}
		return
	}
	data := bytes.TrimSpace(f.Data)
	if len(data) > 0 && data[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(data, &batch) == nil {
			for _, m := range batch {
				l.d.message(m, text)
			}
			return
		}
	}
	l.d.message(data, text)
}

// message logs one decoded message (a frame, or a member of a batch).
func (l *eraData) message(data []byte, text string) {
	var m wireMessage
	if err := json.Unmarshal(data, &m); err != nil {
		if jsonFragment.Match(data) {
			l.fragments.add(text)
		} else {
			l.nonJSON.add(text)
		}
		return
	}
	switch {
	case m.Method != nil && m.ID != nil && string(m.ID) != "null":
		l.requests = append(l.requests, logged{method: *m.Method, text: text})
	case m.Method != nil:
		if len(l.notifications) < maxNotifications {
			l.notifications = append(l.notifications, logNote{method: *m.Method, params: m.Params, text: text})
		} else {
			l.dropped++
		}
	default:
		if why := responseFault(&m); why != "" {
			l.shape.add(why + ": " + text)
		}
	}
}

// responseFault says how a response breaks JSON-RPC 2.0 §5, or "".
func responseFault(m *wireMessage) string {
	switch {
	case m.JSONRPC == nil:
		return "no jsonrpc member"
	case *m.JSONRPC != "2.0":
		return "jsonrpc is " + strconv.Quote(*m.JSONRPC) + ", not \"2.0\""
	case m.Result != nil && m.Error != nil:
		return "both result and error"
	case m.Result == nil && m.Error == nil:
		return "neither result nor error"
	case m.ID == nil:
		return "no id"
	case !validID(m.ID):
		return "id " + string(m.ID) + " is neither a string, a number nor null"
	case string(m.ID) == "null" && m.Error == nil:
		return "a result with a null id"
	case m.Error != nil:
		var e struct {
			Code    *json.Number `json:"code"`
			Message *string      `json:"message"`
		}
		if json.Unmarshal(m.Error, &e) != nil {
			return "the error is not an object"
		}
		if e.Code == nil {
			return "the error has no code"
		}
		if _, err := e.Code.Int64(); err != nil {
			return fmt.Sprintf("the error code %s is not an integer", e.Code.String())
		}
		if e.Message == nil {
			return "the error has no message"
		}
	}
	return ""
}

// validID reports whether raw is a JSON string, number or null.
func validID(raw json.RawMessage) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch v.(type) {
	case string, float64, nil:
		return true
	}
	return false
}

// snapshot copies what the whole-era rows read.
func (l *eraLog) snapshot() eraData {
	l.mu.Lock()
	defer l.mu.Unlock()
	d := l.d
	d.fragments.items = append([]string(nil), d.fragments.items...)
	d.nonJSON.items = append([]string(nil), d.nonJSON.items...)
	d.badUTF8.items = append([]string(nil), d.badUTF8.items...)
	d.otherBad.items = append([]string(nil), d.otherBad.items...)
	d.shape.items = append([]string(nil), d.shape.items...)
	d.requests = append([]logged(nil), d.requests...)
	d.notifications = append([]logNote(nil), d.notifications...)
	return d
}
