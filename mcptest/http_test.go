package mcptest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/mcpspec/mcpspec/mcptest"
)

// httpClient returns a client whose connections are closed when the test ends.
func httpClient(t testing.TB) *http.Client {
	tr := &http.Transport{DisableKeepAlives: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: waitFor}
}

type httpReply struct {
	status int
	header http.Header
	body   []byte
}

func (r httpReply) msg(t testing.TB) msg {
	t.Helper()
	var m msg
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("HTTP %d body is not JSON: %v: %s", r.status, err, r.body)
	}
	m.raw = r.body
	return m
}

func do(t testing.TB, hc *http.Client, method, url string, header map[string]string, body any) httpReply {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return httpReply{resp.StatusCode, resp.Header, b}
}

func rpc(id any, method string, params any) map[string]any {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if id != nil {
		m["id"] = id
	}
	if params != nil {
		m["params"] = params
	}
	return m
}

var initParams = map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
	"clientInfo": map[string]any{"name": "t", "version": "0"}}

// sseEvents parses a complete event-stream body.
func sseEvents(body []byte) (names []string, data []string) {
	for block := range strings.SplitSeq(strings.TrimSpace(string(body)), "\n\n") {
		var name, d string
		for line := range strings.SplitSeq(block, "\n") {
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				name = v
			}
			if v, ok := strings.CutPrefix(line, "data: "); ok {
				d = v
			}
		}
		names, data = append(names, name), append(data, d)
	}
	return names, data
}

func TestStreamableLegacySession(t *testing.T) {
	s := mcptest.NewServer(nil)
	t.Cleanup(s.Close)
	hc := httpClient(t)

	r := do(t, hc, "POST", s.URL, nil, rpc(1, "initialize", initParams))
	sid := r.header.Get(mcptest.HeaderSessionID)
	if r.status != 200 || sid == "" || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("initialize: %d %v %s", r.status, r.header, r.body)
	}
	if v := r.msg(t); !strings.Contains(string(v.Result), `"protocolVersion":"2025-06-18"`) {
		t.Errorf("initialize result %s", v.raw)
	}
	hdr := map[string]string{mcptest.HeaderSessionID: sid, mcptest.HeaderProtocolVersion: "2025-06-18"}
	if r := do(t, hc, "POST", s.URL, hdr, rpc(nil, "notifications/initialized", nil)); r.status != 202 || len(r.body) != 0 {
		t.Errorf("notification: %d %s", r.status, r.body)
	}
	if r := do(t, hc, "POST", s.URL, hdr, rpc(2, "tools/call", echoCall("hi"))); r.status != 200 || !strings.Contains(string(r.body), `"text":"hi"`) {
		t.Errorf("echo: %d %s", r.status, r.body)
	}
	if r := do(t, hc, "POST", s.URL, nil, rpc(3, "tools/list", nil)); r.status != 400 {
		t.Errorf("no session id: %d %s", r.status, r.body)
	}
	if r := do(t, hc, "POST", s.URL, map[string]string{mcptest.HeaderSessionID: "nope"}, rpc(3, "tools/list", nil)); r.status != 404 {
		t.Errorf("unknown session id: %d %s", r.status, r.body)
	}
	if r := do(t, hc, "POST", s.URL, map[string]string{mcptest.HeaderSessionID: sid, mcptest.HeaderProtocolVersion: "1999-01-01"}, rpc(3, "ping", nil)); r.status != 400 {
		t.Errorf("bad protocol version header: %d %s", r.status, r.body)
	}

	// A request with a progressToken is answered as an event stream: the priming event (an id,
	// retry and empty data), progress, then the result.
	p := toolCall("slow", map[string]any{"milliseconds": 10})
	p["_meta"] = map[string]any{"progressToken": 9}
	r = do(t, hc, "POST", s.URL, hdr, rpc(4, "tools/call", p))
	names, data := sseEvents(r.body)
	if r.header.Get("Content-Type") != "text/event-stream" || len(data) != 12 || data[0] != "" ||
		!strings.Contains(string(r.body), "retry: 100\n") || names[1] != "message" ||
		!strings.Contains(data[1], "notifications/progress") || !strings.Contains(data[11], "slept 10ms") {
		t.Errorf("SSE answer: %v %s", r.header, r.body)
	}

	if r := do(t, hc, "PUT", s.URL, hdr, nil); r.status != 405 {
		t.Errorf("PUT: %d", r.status)
	}
	if r := do(t, hc, "DELETE", s.URL, hdr, nil); r.status != 200 {
		t.Errorf("DELETE: %d %s", r.status, r.body)
	}
	if r := do(t, hc, "POST", s.URL, hdr, rpc(5, "ping", nil)); r.status != 404 {
		t.Errorf("after DELETE: %d %s", r.status, r.body)
	}
}

func TestStreamableGetStream(t *testing.T) {
	s := mcptest.NewServer(nil)
	t.Cleanup(s.Close)
	hc := httpClient(t)
	sid := do(t, hc, "POST", s.URL, nil, rpc(1, "initialize", initParams)).header.Get(mcptest.HeaderSessionID)
	hdr := map[string]string{mcptest.HeaderSessionID: sid}

	if r := do(t, hc, "GET", s.URL, map[string]string{mcptest.HeaderSessionID: sid, "Accept": "application/json"}, nil); r.status != 406 {
		t.Errorf("GET without text/event-stream: %d", r.status)
	}
	req, _ := http.NewRequestWithContext(t.Context(), "GET", s.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(mcptest.HeaderSessionID, sid)
	resp, err := hc.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET stream: %v %v", err, resp)
	}
	defer resp.Body.Close()
	if r := do(t, hc, "GET", s.URL, map[string]string{mcptest.HeaderSessionID: sid, "Accept": "text/event-stream"}, nil); r.status != 409 {
		t.Errorf("second GET stream: %d", r.status)
	}
	// In JSON mode the log notification travels on the GET stream.
	if r := do(t, hc, "POST", s.URL, hdr, rpc(2, "logging/setLevel", map[string]any{"level": "info"})); r.status != 200 {
		t.Fatalf("setLevel: %d %s", r.status, r.body)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			if !strings.Contains(sc.Text(), "notifications/message") {
				t.Errorf("GET stream event %s", sc.Text())
			}
			break
		}
	}
	// Server close ends the stream.
	s.Close()
	for sc.Scan() {
	}
}

func TestStreamableStateless(t *testing.T) {
	for _, era := range []mcptest.Era{mcptest.EraBoth, mcptest.EraStateless} {
		s := mcptest.NewServer(&mcptest.Options{Era: era})
		t.Cleanup(s.Close)
		hc := httpClient(t)
		v := mcptest.StatelessVersion
		hdr := func(method string) map[string]string {
			return map[string]string{mcptest.HeaderMethod: method, mcptest.HeaderProtocolVersion: v}
		}
		tests := []struct {
			name       string
			header     map[string]string
			body       map[string]any
			wantStatus int
			wantCode   int
		}{
			{"discover", hdr("server/discover"), rpc(1, "server/discover", statelessMeta(nil, v)), 200, 0},
			{"echo", map[string]string{mcptest.HeaderMethod: "tools/call", mcptest.HeaderName: "echo"}, rpc(2, "tools/call", statelessMeta(echoCall("s"), v)), 200, 0},
			{"method header mismatch", hdr("tools/list"), rpc(3, "tools/call", statelessMeta(echoCall("s"), v)), 400, mcptest.CodeHeaderMismatch},
			{"method header missing", nil, rpc(3, "tools/list", statelessMeta(nil, v)), 400, mcptest.CodeHeaderMismatch},
			{"name header mismatch", map[string]string{mcptest.HeaderMethod: "tools/call", mcptest.HeaderName: "add"}, rpc(3, "tools/call", statelessMeta(echoCall("s"), v)), 400, mcptest.CodeHeaderMismatch},
			{"unsupported version", map[string]string{mcptest.HeaderMethod: "tools/list"}, rpc(4, "tools/list", statelessMeta(nil, "2031-01-01")), 400, mcptest.CodeUnsupportedVersion},
			{"unknown method", hdr("nope/nope"), rpc(5, "nope/nope", statelessMeta(nil, v)), 404, mcptest.CodeMethodNotFound},
			{"resource not found", hdr("resources/read"), rpc(6, "resources/read", statelessMeta(map[string]any{"uri": "mcptest://x"}, v)), 400, mcptest.CodeInvalidParams},
		}
		if era == mcptest.EraStateless {
			tests = append(tests,
				struct {
					name       string
					header     map[string]string
					body       map[string]any
					wantStatus int
					wantCode   int
				}{"initialize", nil, rpc(7, "initialize", initParams), 404, mcptest.CodeMethodNotFound},
				struct {
					name       string
					header     map[string]string
					body       map[string]any
					wantStatus int
					wantCode   int
				}{"missing _meta", nil, rpc(8, "tools/list", nil), 400, mcptest.CodeInvalidParams})
		}
		for _, tt := range tests {
			r := do(t, hc, "POST", s.URL, tt.header, tt.body)
			m := r.msg(t)
			gotCode := 0
			if m.Error != nil {
				gotCode = m.Error.Code
			}
			if r.status != tt.wantStatus || gotCode != tt.wantCode || r.header.Get(mcptest.HeaderSessionID) != "" {
				t.Errorf("era %q %s: HTTP %d %s, want %d code %d", era, tt.name, r.status, r.body, tt.wantStatus, tt.wantCode)
			}
		}
		if era == mcptest.EraStateless {
			if r := do(t, hc, "GET", s.URL, map[string]string{"Accept": "text/event-stream"}, nil); r.status != 405 {
				t.Errorf("stateless GET: %d", r.status)
			}
			if r := do(t, hc, "DELETE", s.URL, nil, nil); r.status != 405 {
				t.Errorf("stateless DELETE: %d", r.status)
			}
		}
	}
}

func TestOriginValidation(t *testing.T) {
	s := mcptest.NewServer(nil)
	t.Cleanup(s.Close)
	hc := httpClient(t)
	for origin, want := range map[string]int{
		"https://evil.example":  403,
		"http://10.0.0.1:8080":  403,
		"http://localhost:3000": 200,
		"http://127.0.0.1":      200,
		"http://[::1]:9":        200,
	} {
		if r := do(t, hc, "POST", s.URL, map[string]string{"Origin": origin}, rpc(1, "initialize", initParams)); r.status != want {
			t.Errorf("Origin %s: HTTP %d, want %d", origin, r.status, want)
		}
	}
}

func TestStreamableCrashAndMalformed(t *testing.T) {
	s := mcptest.NewServer(&mcptest.Options{CrashRate: 1})
	t.Cleanup(s.Close)
	hc := httpClient(t)
	sid := do(t, hc, "POST", s.URL, nil, rpc(1, "initialize", initParams)).header.Get(mcptest.HeaderSessionID)
	hdr := map[string]string{mcptest.HeaderSessionID: sid}
	b, _ := json.Marshal(rpc(2, "tools/call", echoCall("x")))
	req, _ := http.NewRequestWithContext(t.Context(), "POST", s.URL, bytes.NewReader(b))
	req.Header.Set(mcptest.HeaderSessionID, sid)
	resp, err := hc.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("crash answered HTTP %d, want a dropped connection", resp.StatusCode)
	}
	if r := do(t, hc, "POST", s.URL, hdr, rpc(3, "ping", nil)); r.status != 404 {
		t.Errorf("session survived the crash: %d", r.status)
	}

	m := mcptest.NewServer(&mcptest.Options{MalformedEvery: 1, Era: mcptest.EraLegacy})
	t.Cleanup(m.Close)
	sid = do(t, hc, "POST", m.URL, nil, rpc(1, "initialize", initParams)).header.Get(mcptest.HeaderSessionID)
	r := do(t, hc, "POST", m.URL, map[string]string{mcptest.HeaderSessionID: sid}, rpc(2, "tools/call", echoCall("x")))
	if r.status != 200 || json.Valid(r.body) || !strings.HasPrefix(string(r.body), `{"jsonrpc":"2.0","id":2,`) {
		t.Errorf("malformed over HTTP: %d %s", r.status, r.body)
	}
}

func TestLegacySSE(t *testing.T) {
	s := mcptest.NewServer(nil)
	t.Cleanup(s.Close)
	hc := httpClient(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.SSEURL, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := (&http.Client{Transport: hc.Transport}).Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /sse: %v %v", err, resp)
	}
	defer resp.Body.Close()
	events := make(chan [2]string, 16)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		var name string
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				name = v
			}
			if v, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- [2]string{name, v}
			}
		}
	}()
	next := func() [2]string {
		t.Helper()
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatal("SSE stream ended")
			}
			return e
		case <-time.After(waitFor):
			t.Fatal("no SSE event")
		}
		return [2]string{}
	}
	ep := next()
	if ep[0] != "endpoint" || !strings.HasPrefix(ep[1], "/message?sessionId=") {
		t.Fatalf("first event %v", ep)
	}
	postURL := strings.TrimSuffix(s.SSEURL, "/sse") + ep[1]
	if r := do(t, hc, "POST", postURL, nil, rpc(1, "initialize", initParams)); r.status != 202 {
		t.Fatalf("POST initialize: %d %s", r.status, r.body)
	}
	if e := next(); e[0] != "message" || !strings.Contains(e[1], `"protocolVersion":"2025-06-18"`) {
		t.Errorf("initialize answer %v", e)
	}
	do(t, hc, "POST", postURL, nil, rpc(nil, "notifications/initialized", nil))
	do(t, hc, "POST", postURL, nil, rpc(2, "tools/call", echoCall("over sse")))
	if e := next(); !strings.Contains(e[1], `"text":"over sse"`) {
		t.Errorf("echo answer %v", e)
	}
	if r := do(t, hc, "POST", strings.TrimSuffix(s.SSEURL, "/sse")+"/message?sessionId=nope", nil, rpc(3, "ping", nil)); r.status != 404 {
		t.Errorf("unknown SSE session: %d", r.status)
	}
	cancel()
	for range events {
	}
}

func TestWebSocket(t *testing.T) {
	s := mcptest.NewServer(&mcptest.Options{MalformedEvery: 2})
	t.Cleanup(s.Close)
	ctx := t.Context()
	c, resp, err := websocket.Dial(ctx, s.WSURL, &websocket.DialOptions{Subprotocols: []string{"mcp"}})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.CloseNow()
	if c.Subprotocol() != "mcp" || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Errorf("subprotocol %q status %d", c.Subprotocol(), resp.StatusCode)
	}
	roundTrip := func(v any) []byte {
		t.Helper()
		b, _ := json.Marshal(v)
		if err := c.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithTimeout(ctx, waitFor)
		defer cancel()
		typ, data, err := c.Read(rctx)
		if err != nil || typ != websocket.MessageText {
			t.Fatalf("read: %v %v", typ, err)
		}
		return data
	}
	if got := roundTrip(rpc(1, "initialize", initParams)); !strings.Contains(string(got), "serverInfo") {
		t.Errorf("initialize %s", got)
	}
	if got := roundTrip(rpc(2, "tools/call", echoCall("ws"))); !strings.Contains(string(got), `"text":"ws"`) {
		t.Errorf("echo %s", got)
	}
	if got := roundTrip(rpc(3, "tools/call", echoCall("ws"))); json.Valid(got) {
		t.Errorf("second tools/call frame is valid JSON, want truncated: %s", got)
	}
	_ = c.Close(websocket.StatusNormalClosure, "")
}

func TestCloseWaitsAndEndsHangs(t *testing.T) {
	s := mcptest.NewServer(&mcptest.Options{HangFirstCall: true})
	hc := httpClient(t)
	sid := do(t, hc, "POST", s.URL, nil, rpc(1, "initialize", initParams)).header.Get(mcptest.HeaderSessionID)
	errc := make(chan error, 1)
	go func() {
		b, _ := json.Marshal(rpc(2, "tools/call", echoCall("hang")))
		req, _ := http.NewRequest("POST", s.URL, bytes.NewReader(b))
		req.Header.Set(mcptest.HeaderSessionID, sid)
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
			err = fmt.Errorf("hung call was answered: HTTP %d", resp.StatusCode)
		}
		errc <- err
	}()
	waitStats(t, s.Stats, func(st mcptest.Stats) bool { return st.InFlight == 1 })
	s.Close() // must return: Close ends the hung call and waits for its handler
	if st := s.Stats(); st.InFlight != 0 {
		t.Errorf("after Close: %+v", st)
	}
	select {
	case err := <-errc:
		if err == nil || strings.Contains(err.Error(), "was answered") {
			t.Errorf("hung call: %v, want a dropped connection", err)
		}
	case <-time.After(waitFor):
		t.Fatal("client still blocked after Close")
	}
}

func TestCrashOverSSEAndWebSocket(t *testing.T) {
	s := mcptest.NewServer(&mcptest.Options{CrashRate: 1})
	t.Cleanup(s.Close)
	ctx := t.Context()

	wc, _, err := websocket.Dial(ctx, s.WSURL, &websocket.DialOptions{Subprotocols: []string{"mcp"}})
	if err != nil {
		t.Fatal(err)
	}
	defer wc.CloseNow()
	b, _ := json.Marshal(rpc(1, "tools/call", echoCall("x")))
	if err := wc.Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(ctx, waitFor)
	defer cancel()
	if _, data, err := wc.Read(rctx); err == nil || rctx.Err() != nil {
		t.Errorf("WebSocket crash: read %s, %v; want the connection dropped", data, err)
	}

	hc := httpClient(t)
	req, _ := http.NewRequestWithContext(ctx, "GET", s.SSEURL, nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	var endpoint string
	for endpoint == "" {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
			endpoint = v
		}
	}
	base := strings.TrimSuffix(s.SSEURL, "/sse")
	if r := do(t, hc, "POST", base+endpoint, nil, rpc(1, "tools/call", echoCall("x"))); r.status != 202 {
		t.Fatalf("POST: %d", r.status)
	}
	rest, err := io.ReadAll(br)
	if err == nil || strings.Contains(string(rest), "data:") {
		t.Errorf("SSE crash: stream ended cleanly (%v) or answered: %q", err, rest)
	}
	if r := do(t, hc, "POST", base+endpoint, nil, rpc(2, "ping", nil)); r.status != 404 {
		t.Errorf("POST after crash: %d, want 404", r.status)
	}
}

func TestStreamableCancel(t *testing.T) {
	s := mcptest.NewServer(nil)
	t.Cleanup(s.Close)
	hc := httpClient(t)
	sid := do(t, hc, "POST", s.URL, nil, rpc(1, "initialize", initParams)).header.Get(mcptest.HeaderSessionID)
	hdr := map[string]string{mcptest.HeaderSessionID: sid}
	got := make(chan httpReply, 1)
	go func() {
		got <- do(t, hc, "POST", s.URL, hdr, rpc(7, "tools/call", toolCall("slow", map[string]any{"milliseconds": 60000})))
	}()
	waitStats(t, s.Stats, func(st mcptest.Stats) bool { return st.InFlight == 1 })
	if r := do(t, hc, "POST", s.URL, hdr, rpc(nil, "notifications/cancelled", map[string]any{"requestId": 7})); r.status != 202 {
		t.Fatalf("cancel: %d", r.status)
	}
	select {
	case r := <-got:
		if r.status != http.StatusNoContent || len(r.body) != 0 {
			t.Errorf("cancelled call answered %d %s, want 204 and no body", r.status, r.body)
		}
	case <-time.After(waitFor):
		t.Fatal("cancelled call still pending")
	}
}

// TestHostValidation checks the DNS-rebinding defence: a request whose Host does not name the
// server is refused on every endpoint, a GET /sse without Origin included, unless the server
// was started with AllowAnyHost.
func TestHostValidation(t *testing.T) {
	s := mcptest.NewServer(nil)
	t.Cleanup(s.Close)
	sloppy := mcptest.NewServer(&mcptest.Options{AllowAnyHost: true})
	t.Cleanup(sloppy.Close)
	_, port, _ := net.SplitHostPort(s.Addr)
	_, sloppyPort, _ := net.SplitHostPort(sloppy.Addr)
	hc := httpClient(t)
	status := func(srv *mcptest.Server, method, path, host string) int {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		var body io.Reader
		if method == "POST" {
			b, _ := json.Marshal(rpc(1, "initialize", initParams))
			body = bytes.NewReader(b)
		}
		req, err := http.NewRequestWithContext(ctx, method, "http://"+srv.Addr+path, body)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("%s %s Host %s: %v", method, path, host, err)
		}
		resp.Body.Close() // an SSE stream is not read: its status is what counts
		return resp.StatusCode
	}
	tests := []struct {
		host string
		want int
	}{
		{"evil.example", 403},
		{"evil.example:" + port, 403},
		{"localhost.evil.example:" + port, 403},
		{"127.0.0.1:1", 403}, // the right host on another port
		{"localhost", 403},   // port 80 implied
		{"127.0.0.1:" + port, 200},
		{"localhost:" + port, 200},
		{"LOCALHOST:" + port, 200},
		{"[::1]:" + port, 200},
	}
	for _, path := range []string{mcptest.PathStreamable, mcptest.PathSSE} {
		method := "POST"
		if path == mcptest.PathSSE {
			method = "GET"
		}
		for _, tt := range tests {
			if got := status(s, method, path, tt.host); got != tt.want {
				t.Errorf("%s %s with Host %q: HTTP %d, want %d", method, path, tt.host, got, tt.want)
			}
		}
		if got := status(sloppy, method, path, "evil.example:"+sloppyPort); got != 200 {
			t.Errorf("AllowAnyHost: %s %s with Host evil.example: HTTP %d, want 200", method, path, got)
		}
	}
}

// TestBearerToken checks Options.BearerToken: every endpoint answers 401 with a Bearer
// challenge to a request without the token or with another one, and serves one that has it.
func TestBearerToken(t *testing.T) {
	s := mcptest.NewServer(&mcptest.Options{BearerToken: "s3cret"})
	t.Cleanup(s.Close)
	hc := httpClient(t)
	tests := []struct {
		auth string
		want int
	}{
		{"", 401},
		{"Bearer wrong", 401},
		{"Basic s3cret", 401},
		{"Bearer s3cret-and-more", 401},
		{"Bearer s3cret", 200},
		{"bearer s3cret", 200},
	}
	for _, path := range []string{mcptest.PathStreamable, mcptest.PathSSE} {
		for _, tt := range tests {
			method := "POST"
			if path == mcptest.PathSSE {
				method = "GET"
			}
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			var body io.Reader
			if method == "POST" {
				b, _ := json.Marshal(rpc(1, "initialize", initParams))
				body = bytes.NewReader(b)
			}
			req, err := http.NewRequestWithContext(ctx, method, "http://"+s.Addr+path, body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			resp.Body.Close()
			cancel()
			if resp.StatusCode != tt.want {
				t.Errorf("%s %s with Authorization %q: HTTP %d, want %d", method, path, tt.auth, resp.StatusCode, tt.want)
			}
			if challenge := resp.Header.Get("WWW-Authenticate"); tt.want == 401 && !strings.HasPrefix(challenge, "Bearer ") {
				t.Errorf("%s %s with Authorization %q: WWW-Authenticate %q, want a Bearer challenge", method, path, tt.auth, challenge)
			}
		}
	}
}
