package probe

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/internal/clock"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// resumeWait bounds the wait for the replayed answer on a resumed stream.
const resumeWait = 8 * time.Second

func sseRows() []Row {
	return []Row{
		{ID: "http.sse-resume", Title: "a stream cut after its first event resumes with Last-Event-ID",
			Spec:    spec1125 + "Basic › Transports › Streamable HTTP › Resumability and Redelivery",
			Applies: every(over(spec.HTTP), inEra(session.EraLegacy)), Timeout: 30 * time.Second, Run: sseResume},
		{ID: "sse.endpoint", Title: "the HTTP+SSE stream starts with an endpoint event",
			Spec: "MCP 2024-11-05 · Basic › Transports › HTTP with SSE", Applies: over(spec.SSE), Once: true, Run: sseEndpoint},
	}
}

// sseEvent is one event read by hand.
type sseEvent struct {
	name, data, id string
	hasID          bool
	retry          string
}

// readEvent reads one event (up to its blank line) from r.
func readEvent(r *bufio.Reader) (sseEvent, error) {
	var ev sseEvent
	var data []string
	seen := false
	for {
		line, err := r.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if err != nil && line == "" {
			if seen {
				ev.data = strings.Join(data, "\n")
				return ev, nil
			}
			return ev, err
		}
		if line == "" {
			if seen {
				ev.data = strings.Join(data, "\n")
				return ev, nil
			}
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		seen = true
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.name = value
		case "data":
			data = append(data, value)
		case "id":
			ev.id, ev.hasID = value, true
		case "retry":
			ev.retry = value
		}
	}
}

// sseResume POSTs a request answered as an event stream, drops the stream after its first
// event and resumes it with GET and Last-Event-ID.
func sseResume(ctx context.Context, e *Env) Outcome {
	return withSession(e, func(sid string) Outcome {
		body := request(probeID("resume"), "ping", nil)
		if c, why := e.slow(ctx); why == "" {
			e.note("slow call: %s %s (%s)", c.Tool, c.Args, c.Why)
			body = request(probeID("resume"), "tools/call", e.progressParams(c, probeID("resume-progress")))
		}
		first, err := e.firstEvent(ctx, body)
		if err != nil {
			return Outcome{Fail, err.Error()}
		}
		switch {
		case first == nil:
			return Outcome{NotApplicable, "the request was answered as application/json: no stream to resume"}
		case !first.hasID:
			return Outcome{NotApplicable, "the stream's events carry no id: streams are not resumable (resumability is optional)"}
		case answers(first.data, probeID("resume")):
			return Outcome{NotApplicable, "the response came in the stream's first event: nothing left to resume"}
		}
		rctx, cancel := context.WithTimeout(ctx, resumeWait)
		defer cancel()
		resp, err := e.resume(rctx, sid, first)
		if err != nil {
			return Outcome{Warn, "the resuming GET failed: " + innermost(err).Error()}
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			e.hub.note(dirReceived, "HTTP "+resp.Status+" "+excerpt(b))
			return Outcome{Warn, fmt.Sprintf("the events have ids, but GET with Last-Event-ID %s answered HTTP %d; the client cannot recover the lost answer", first.id, resp.StatusCode)}
		}
		e.hub.note(dirReceived, "HTTP "+resp.Status+" ["+shownHeaders(resp.Header)+"]")
		r := bufio.NewReader(resp.Body)
		for n := 0; n < maxEvents; n++ {
			ev, err := readEvent(r)
			if err != nil {
				break
			}
			e.hub.note(dirReceived, fmt.Sprintf("event(id %s): %s", ev.id, excerpt([]byte(ev.data))))
			if answers(ev.data, probeID("resume")) {
				return Outcome{Pass, "the resumed stream (Last-Event-ID " + first.id + ") delivered the answer"}
			}
		}
		return Outcome{Warn, "the stream resumed with Last-Event-ID " + first.id + " but did not deliver the answer within " + resumeWait.String()}
	})
}

// resume GETs the stream with Last-Event-ID after the retry delay the server asked for, as a
// client does; a 409 (the server still sends the stream on the dropped connection) is tried
// again a few times.
func (e *Env) resume(ctx context.Context, sid string, first *sseEvent) (*http.Response, error) {
	delay := 500 * time.Millisecond
	if ms, err := strconv.Atoi(first.retry); err == nil && ms >= 0 {
		delay = min(time.Duration(ms)*time.Millisecond, 5*time.Second)
	}
	for attempt := 1; ; attempt++ {
		if clock.Sleep(ctx, max(delay, 50*time.Millisecond)) != nil {
			return nil, ctx.Err()
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.endpoint(), nil)
		if err != nil {
			return nil, err
		}
		for k, vs := range e.p.o.Header {
			req.Header[k] = append([]string(nil), vs...)
		}
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", e.Version)
		req.Header.Set("Last-Event-ID", first.id)
		e.hub.note(dirSent, requestText(req, nil))
		resp, err := e.p.httpc.Do(req)
		if err != nil || resp.StatusCode != http.StatusConflict || attempt == 3 {
			return resp, err
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		e.hub.note(dirReceived, "HTTP "+resp.Status+" "+excerpt(b)+" — trying again")
	}
}

// firstEvent POSTs body in the main session and reads the first event of its stream, then
// drops the connection; nil means the answer was not a stream.
func (e *Env) firstEvent(ctx context.Context, body []byte) (*sseEvent, error) {
	rctx, cancel := context.WithTimeout(ctx, resumeWait)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, e.endpoint(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, vs := range e.p.o.Header {
		req.Header[k] = append([]string(nil), vs...)
	}
	e.eraHeaders(req.Header, body)
	e.hub.note(dirSent, requestText(req, body))
	resp, err := e.p.httpc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("POST: %w", innermost(err))
	}
	defer resp.Body.Close()
	ct, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(ct) != "text/event-stream" {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		e.hub.note(dirReceived, "HTTP "+resp.Status+" "+excerpt(b))
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("POST answered HTTP %d", resp.StatusCode)
		}
		return nil, nil
	}
	ev, err := readEvent(bufio.NewReader(resp.Body))
	if err != nil {
		return nil, fmt.Errorf("reading the stream's first event: %w", err)
	}
	e.hub.note(dirReceived, fmt.Sprintf("HTTP %s, first event (id %q, retry %q): %s — connection dropped here", resp.Status, ev.id, ev.retry, excerpt([]byte(ev.data))))
	return &ev, nil
}

// answers reports whether data is the JSON-RPC response to the request with raw id.
func answers(data, id string) bool {
	var m wireMessage
	return json.Unmarshal([]byte(data), &m) == nil && m.Method == nil && string(bytes.TrimSpace(m.ID)) == id &&
		(m.Result != nil || m.Error != nil)
}

// sseEndpoint reads the first event of the HTTP+SSE stream.
func sseEndpoint(ctx context.Context, e *Env) Outcome {
	rctx, cancel := context.WithTimeout(ctx, streamWait+2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, e.endpoint(), nil)
	if err != nil {
		return Outcome{Fail, err.Error()}
	}
	for k, vs := range e.p.o.Header {
		req.Header[k] = append([]string(nil), vs...)
	}
	req.Header.Set("Accept", "text/event-stream")
	e.hub.note(dirSent, requestText(req, nil))
	resp, err := e.p.httpc.Do(req)
	if err != nil {
		return Outcome{Fail, "GET: " + innermost(err).Error()}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Outcome{Fail, "GET answered HTTP " + strconv.Itoa(resp.StatusCode)}
	}
	ev, err := readEvent(bufio.NewReader(resp.Body))
	if err != nil {
		return Outcome{Fail, "no first event: " + err.Error()}
	}
	e.hub.note(dirReceived, fmt.Sprintf("HTTP %s, first event %q: %s", resp.Status, ev.name, excerpt([]byte(ev.data))))
	if ev.name != "endpoint" || strings.TrimSpace(ev.data) == "" {
		return Outcome{Fail, fmt.Sprintf("the first event is %q with data %q; it must be an endpoint event naming the POST URI", ev.name, ev.data)}
	}
	return Outcome{Pass, "endpoint " + ev.data}
}
