package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/sseparse"
)

// httpHeader is the header a row edits before a request goes.
type httpHeader = http.Header

// Limits of the HTTP rows' reads.
const (
	maxBody     = 1 << 20
	streamWait  = 3 * time.Second
	maxEvents   = 32
	headerShown = "Mcp-Session-Id MCP-Protocol-Version Mcp-Method Mcp-Name Origin Last-Event-ID Allow " +
		"Access-Control-Allow-Origin Access-Control-Allow-Credentials Access-Control-Allow-Methods " +
		"Access-Control-Allow-Headers Access-Control-Expose-Headers Access-Control-Request-Method Content-Type Location"
)

// httpAnswer is an HTTP exchange as a row reads it.
type httpAnswer struct {
	status int
	header http.Header
	// body is the JSON body, or for an event stream the data of the response event (else of
	// the last event).
	body []byte
	// events are the data of the events of an event stream, in order.
	events [][]byte
	// ids are the event ids of an event stream, in order ("" for an event without one).
	ids []string
}

// contentType is the media type of the answer, lowercased, without parameters.
func (a *httpAnswer) contentType() string {
	ct, _, _ := strings.Cut(a.header.Get("Content-Type"), ";")
	return strings.ToLower(strings.TrimSpace(ct))
}

// rpcError decodes a JSON-RPC error in the body.
func (a *httpAnswer) rpcError() (code int, msg string, data json.RawMessage, ok bool) {
	var m struct {
		Error *struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if json.Unmarshal(a.body, &m) != nil || m.Error == nil {
		return 0, "", nil, false
	}
	return m.Error.Code, m.Error.Message, m.Error.Data, true
}

// result returns the JSON-RPC result in the body.
func (a *httpAnswer) result() (json.RawMessage, bool) {
	var m struct {
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(a.body, &m) != nil || m.Result == nil {
		return nil, false
	}
	return m.Result, true
}

// describe says in a few words what the answer was.
func (a *httpAnswer) describe() string {
	s := fmt.Sprintf("HTTP %d", a.status)
	if code, msg, _, ok := a.rpcError(); ok {
		s += fmt.Sprintf(" with error %d (%s)", code, msg)
	} else if _, ok := a.result(); ok {
		s += " with a result"
	}
	return s
}

// endpoint is the server's Streamable HTTP (or HTTP+SSE) URL.
func (e *Env) endpoint() string { return e.p.o.Server.Info.URL }

// sessionID is the main session's Mcp-Session-Id, "" without one.
func (e *Env) sessionID() string {
	if e.conn == nil {
		return ""
	}
	if s, ok := e.conn.Conn().(transport.Sessioned); ok {
		return s.SessionID()
	}
	return ""
}

// post POSTs body to the endpoint with the headers a well-behaved client of this era sends
// (the main session's id, MCP-Protocol-Version, in the stateless era Mcp-Method and Mcp-Name),
// then lets edit change them.
func (e *Env) post(ctx context.Context, body []byte, edit func(httpHeader)) (*httpAnswer, error) {
	return e.exchange(ctx, http.MethodPost, body, func(h httpHeader) {
		e.eraHeaders(h, body)
		if edit != nil {
			edit(h)
		}
	})
}

// eraHeaders sets the headers of this era's POST of body.
func (e *Env) eraHeaders(h httpHeader, body []byte) {
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("MCP-Protocol-Version", e.Version)
	if e.Target.Era == session.EraLegacy {
		if id := e.sessionID(); id != "" {
			h.Set("Mcp-Session-Id", id)
		}
		return
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil {
		return
	}
	if m.Method != "" {
		h.Set("Mcp-Method", m.Method)
	}
	switch m.Method {
	case "tools/call", "prompts/get":
		h.Set("Mcp-Name", m.Params.Name)
	case "resources/read":
		h.Set("Mcp-Name", m.Params.URI)
	}
}

// exchange sends one HTTP request to the endpoint with the user's headers, then edit's, and
// reads the answer: a JSON body, or an event stream up to the response (or streamWait). A
// "Host" header set by edit becomes the request's Host.
func (e *Env) exchange(ctx context.Context, method string, body []byte, edit func(httpHeader)) (*httpAnswer, error) {
	return e.exchangeURL(ctx, e.endpoint(), method, body, edit, false)
}

// exchangeURL is exchange to another URL; with headOnly it reads only the status and headers
// (and a short body that is not an event stream), for GETs of streams that stay open.
func (e *Env) exchangeURL(ctx context.Context, target, method string, body []byte, edit func(httpHeader), headOnly bool) (*httpAnswer, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, method, target, rd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, target, err)
	}
	for k, vs := range e.p.o.Header {
		req.Header[k] = append([]string(nil), vs...)
	}
	if edit != nil {
		edit(req.Header)
	}
	if h := req.Header.Get("Host"); h != "" {
		req.Host = h
		req.Header.Del("Host")
	}
	e.hub.note(dirSent, requestText(req, body))
	resp, err := e.p.httpc.Do(req)
	if err != nil {
		e.hub.note(dirReceived, "no HTTP answer: "+innermost(err).Error())
		return nil, fmt.Errorf("%s %s: %w", method, target, innermost(err))
	}
	defer resp.Body.Close()
	a := &httpAnswer{status: resp.StatusCode, header: resp.Header}
	switch {
	case a.contentType() == "text/event-stream" && headOnly:
	case a.contentType() == "text/event-stream" && resp.StatusCode < 300:
		a.readStream(ctx, resp.Body)
	default:
		a.body, _ = io.ReadAll(io.LimitReader(resp.Body, maxBody))
	}
	e.hub.note(dirReceived, answerText(resp, a))
	return a, nil
}

// readStream reads an event stream until a JSON-RPC response event, its end, or streamWait.
func (a *httpAnswer) readStream(ctx context.Context, body io.ReadCloser) {
	ctx, cancel := context.WithTimeout(ctx, streamWait)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { _ = body.Close() })
	defer stop()
	r := sseparse.NewReader(body, maxBody)
	for len(a.events) < maxEvents {
		ev, err := r.Next()
		if err != nil {
			return
		}
		a.events = append(a.events, ev.Data)
		a.ids = append(a.ids, ev.ID)
		a.body = ev.Data
		var m wireMessage
		if json.Unmarshal(ev.Data, &m) == nil && m.Method == nil && (m.Result != nil || m.Error != nil) {
			return
		}
	}
}

// requestText abridges a request for evidence; only protocol headers are shown, never
// credentials.
func requestText(req *http.Request, body []byte) string {
	u := *req.URL
	u.User = nil
	s := req.Method + " " + u.String()
	if req.Host != "" && req.Host != req.URL.Host {
		s += " (Host: " + req.Host + ")"
	}
	if h := shownHeaders(req.Header); h != "" {
		s += " [" + h + "]"
	}
	if len(body) > 0 {
		s += " " + excerpt(body)
	}
	return s
}

// answerText abridges an answer for evidence.
func answerText(resp *http.Response, a *httpAnswer) string {
	s := "HTTP " + resp.Status
	if h := shownHeaders(resp.Header); h != "" {
		s += " [" + h + "]"
	}
	switch {
	case len(a.events) > 0:
		for i, ev := range a.events {
			if a.ids[i] != "" {
				s += fmt.Sprintf(" event(id %s): %s", a.ids[i], excerpt(ev))
			} else {
				s += " event: " + excerpt(ev)
			}
		}
	case len(a.body) > 0:
		s += " " + excerpt(a.body)
	}
	return s
}

func shownHeaders(h http.Header) string {
	var parts []string
	for _, k := range strings.Fields(headerShown) {
		if v := h.Values(k); len(v) > 0 {
			parts = append(parts, k+": "+strings.Join(v, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// innermost strips *url.Error wrapping so messages say what failed.
func innermost(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
