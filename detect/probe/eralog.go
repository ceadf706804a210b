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
	// pending are the latest lines that do not parse but look like pieces of JSON, in the
	// order received: a message split over lines while they may still join into one, or a
	// message cut short when they never do (see settle).
	pending []pendingLine
}

// pendingLine is one line of a run that may be a message split over lines.
type pendingLine struct {
	data []byte
	text string
}

// maxPending bounds a run of lines that may join into one message.
const maxPending = 256

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
var jsonFragment = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*([{}\[\]]|"[^"]*"\s*:|[}\]],?\s*$)|[{\[,]\s*$`) })

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
	if !json.Valid(data) && jsonFragment().Match(data) {
		l.d.piece(data, text)
		return
	}
	l.d.settle()
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

// piece logs a line that does not parse but looks like a piece of JSON: when the run of such
// lines joins into one JSON message, each was a piece of a message split over lines.
func (l *eraData) piece(data []byte, text string) {
	l.pending = append(l.pending, pendingLine{data: bytes.Clone(data), text: text})
	var joined []byte
	for _, p := range l.pending {
		joined = append(append(joined, p.data...), '\n')
	}
	if json.Valid(joined) {
		for _, p := range l.pending {
			l.fragments.add(p.text)
		}
		l.pending = nil
		l.message(joined, "[joined] "+excerpt(joined))
		return
	}
	if len(l.pending) >= maxPending {
		l.settle()
	}
}

// settle ends a run of pieces that never joined into a message: a line that starts a JSON
// object or array is a message cut short (malformed output, as a transport rule sees it); the
// other lines are pieces of it, or of a message split over lines whose start was lost.
func (l *eraData) settle() {
	for _, p := range l.pending {
		if len(p.data) > 1 && (p.data[0] == '{' || p.data[0] == '[') {
			l.otherBad.add("[cut short: not valid JSON, and no line after it completes it] " + p.text)
		} else {
			l.fragments.add(p.text)
		}
	}
	l.pending = nil
}

// message logs one decoded message (a frame, or a member of a batch).
func (l *eraData) message(data []byte, text string) {
	var m wireMessage
	if err := json.Unmarshal(data, &m); err != nil {
		l.nonJSON.add(text)
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
	d.pending = nil
	d.fragments.items = append([]string(nil), d.fragments.items...)
	d.nonJSON.items = append([]string(nil), d.nonJSON.items...)
	d.badUTF8.items = append([]string(nil), d.badUTF8.items...)
	d.otherBad.items = append([]string(nil), d.otherBad.items...)
	d.shape.items = append([]string(nil), d.shape.items...)
	// Lines still waiting for the rest of their message are judged as they stand.
	if len(l.d.pending) > 0 {
		d.pending = l.d.pending
		d.settle()
	}
	d.requests = append([]logged(nil), d.requests...)
	d.notifications = append([]logNote(nil), d.notifications...)
	return d
}
