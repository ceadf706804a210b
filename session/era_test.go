package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/internal/poll"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/pipe"
)

// metaOf extracts params._meta of a received request.
func metaOf(t *testing.T, m msg) map[string]json.RawMessage {
	t.Helper()
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatalf("params %s: %v", m.Params, err)
	}
	return p.Meta
}

func TestEraDetection(t *testing.T) {
	cases := []struct {
		name    string
		opts    Options
		handle  func(f *fake, m msg)
		era     Era
		version string
		methods []string // handshake methods the server saw, in order
	}{
		{
			name:    "stateless server answers discover",
			handle:  func(f *fake, m msg) { f.stateless = true; f.defaults(m) },
			era:     EraStateless,
			version: Version20260728,
			methods: []string{"server/discover"},
		},
		{
			name:    "legacy server answers -32601",
			era:     EraLegacy,
			version: Version20251125,
			methods: []string{"server/discover", "initialize", "notifications/initialized"},
		},
		{
			name: "server never answers discover",
			opts: Options{ConnectTimeout: 600 * time.Millisecond},
			handle: func(f *fake, m msg) {
				if m.Method != "server/discover" {
					f.defaults(m)
				}
			},
			era:     EraLegacy,
			version: Version20251125,
			methods: []string{"server/discover", "initialize", "notifications/initialized"},
		},
		{
			name: "discover -32022 listing only legacy versions",
			handle: func(f *fake, m msg) {
				if m.Method == "server/discover" {
					f.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32022,"message":"unsupported","data":{"supported":["2025-06-18","2024-11-05"],"requested":"2026-07-28"}}}`)
					return
				}
				f.defaults(m)
			},
			era:     EraLegacy,
			version: Version20250618,
			methods: []string{"server/discover", "initialize", "notifications/initialized"},
		},
		{
			name:    "pinned legacy version skips discover",
			opts:    Options{ProtocolVersion: Version20250326},
			era:     EraLegacy,
			version: Version20250326,
			methods: []string{"initialize", "notifications/initialized"},
		},
		{
			name:    "pinned stateless version",
			opts:    Options{ProtocolVersion: Version20260728},
			handle:  func(f *fake, m msg) { f.stateless = true; f.defaults(m) },
			era:     EraStateless,
			version: Version20260728,
			methods: []string{"server/discover"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, d := newFake(t, tc.handle)
			o := tc.opts
			s := open(t, d, &o)
			checkHandshake(t, s, f, tc.era, tc.version, tc.methods)
			call := f.received("tools/call")[0]
			meta := metaOf(t, call)
			if tc.era == EraStateless {
				if string(meta["io.modelcontextprotocol/protocolVersion"]) != `"`+tc.version+`"` ||
					meta["io.modelcontextprotocol/clientCapabilities"] == nil || meta["io.modelcontextprotocol/clientInfo"] == nil {
					t.Errorf("stateless request _meta = %s", call.Params)
				}
				if s.ServerInfo().Name != "fake" || s.Instructions() != "hi" {
					t.Errorf("discover info %+v %q", s.ServerInfo(), s.Instructions())
				}
			} else if meta != nil {
				t.Errorf("legacy request has _meta: %s", call.Params)
			}
		})
	}
}

func TestInitializeUnsupportedVersion(t *testing.T) {
	_, d := newFake(t, func(f *fake, m msg) {
		if m.Method == "initialize" {
			f.result(m, `{"protocolVersion":"1999-01-01","capabilities":{},"serverInfo":{"name":"old","version":"0"}}`)
			return
		}
		f.defaults(m)
	})
	_, err := Open(context.Background(), d, nil)
	var e *Error
	if !errors.As(err, &e) || e.Category != ProtocolError || !strings.Contains(e.Message, "1999-01-01") {
		t.Fatalf("Open: %v", err)
	}
}

func TestStatelessMRTR(t *testing.T) {
	// requestState uses escapes so a re-encoding client would change its bytes.
	const state = `"st\u00e9\"te\/1"`
	rounds := 0
	f, d := newFake(t, func(f *fake, m msg) {
		f.stateless = true
		if m.Method != "tools/call" {
			f.defaults(m)
			return
		}
		rounds++
		if rounds == 1 {
			f.result(m, `{"resultType":"input_required","inputRequests":{"q1":{"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object"}}},"q2":{"method":"roots/list","params":{}}},"requestState":`+state+`}`)
			return
		}
		f.result(m, `{"resultType":"complete","content":[{"type":"text","text":"done"}]}`)
	})
	s := open(t, d, &Options{
		ElicitationReply: json.RawMessage(`{"action":"accept","content":{"name":"ada"}}`),
		Roots:            []Root{{URI: "file:///tmp", Name: "tmp"}},
	})
	res, err := s.CallTool(context.Background(), "ask", map[string]any{"x": 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 {
		t.Errorf("content %s", res.Raw)
	}
	calls := f.received("tools/call")
	if len(calls) != 2 || bytes.Equal(calls[0].ID, calls[1].ID) {
		t.Fatalf("%d calls, ids must differ", len(calls))
	}
	retry := calls[1].raw
	if !bytes.Contains(retry, []byte(`"requestState":`+state)) {
		t.Errorf("requestState not echoed byte for byte: %s", retry)
	}
	var p struct {
		Name           string                     `json:"name"`
		Arguments      map[string]int             `json:"arguments"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	if err := json.Unmarshal(calls[1].Params, &p); err != nil {
		t.Fatal(err)
	}
	if p.Name != "ask" || p.Arguments["x"] != 1 || string(p.InputResponses["q1"]) != `{"action":"accept","content":{"name":"ada"}}` ||
		!strings.Contains(string(p.InputResponses["q2"]), "file:///tmp") {
		t.Errorf("retry params %s", calls[1].Params)
	}
	if metaOf(t, calls[1])["io.modelcontextprotocol/protocolVersion"] == nil {
		t.Error("retry lost _meta")
	}
}

func TestStatelessMRTRWithoutReply(t *testing.T) {
	_, d := newFake(t, func(f *fake, m msg) {
		f.stateless = true
		if m.Method == "tools/call" {
			f.result(m, `{"resultType":"input_required","inputRequests":{"q":{"method":"sampling/createMessage","params":{}}}}`)
			return
		}
		f.defaults(m)
	})
	s := open(t, d, nil)
	_, err := s.CallTool(context.Background(), "ask", nil, nil)
	var e *Error
	if !errors.As(err, &e) || e.Category != ServerError || !strings.Contains(e.Message, "sampling/createMessage") {
		t.Fatalf("err %v", err)
	}
}

func TestStatelessMRTRBounded(t *testing.T) {
	f, d := newFake(t, func(f *fake, m msg) {
		f.stateless = true
		if m.Method == "tools/call" {
			f.result(m, `{"resultType":"input_required","inputRequests":{}}`)
			return
		}
		f.defaults(m)
	})
	s := open(t, d, nil)
	if _, err := s.CallTool(context.Background(), "loop", nil, nil); CategoryOf(err) != ServerError {
		t.Fatalf("err %v", err)
	}
	if n := len(f.received("tools/call")); n != maxMRTR+1 {
		t.Errorf("%d attempts, want %d", n, maxMRTR+1)
	}
}

func TestPaging(t *testing.T) {
	pages := map[string]string{
		"":   `{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"p2"}`,
		"p2": `{"tools":[{"name":"b"},{"name":"c"}],"nextCursor":"p3"}`,
		"p3": `{"tools":[{"name":"d"}]}`,
		"r1": `{"tools":[{"name":"x"}],"nextCursor":"r2"}`,
		"r2": `{"tools":[{"name":"y"}],"nextCursor":"r1"}`,
	}
	repeat := false
	_, d := newFake(t, func(f *fake, m msg) {
		if m.Method != "tools/list" {
			f.defaults(m)
			return
		}
		var p struct{ Cursor string }
		_ = json.Unmarshal(m.Params, &p)
		if p.Cursor == "" && repeat {
			p.Cursor = "r1"
		}
		f.result(m, pages[p.Cursor])
	})
	s := open(t, d, nil)
	tools, err := s.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	if diff := cmp.Diff([]string{"a", "b", "c", "d"}, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if string(tools[0].InputSchema) != `{"type":"object"}` || string(tools[0].Raw) != `{"name":"a","inputSchema":{"type":"object"}}` {
		t.Errorf("tool 0 %+v", tools[0])
	}
	repeat = true
	_, err = s.ListTools(context.Background())
	if e := (*Error)(nil); !errors.As(err, &e) || e.Category != ProtocolError || !strings.Contains(e.Message, "repeated cursor") {
		t.Errorf("repeated cursor: %v", err)
	}
}

func TestServerRequestsAnswered(t *testing.T) {
	answers := make(chan msg, 10)
	f, d := newFake(t, func(f *fake, m msg) {
		if m.Method == "" && m.ID != nil {
			answers <- m
			return
		}
		f.defaults(m)
	})
	s := open(t, d, &Options{
		Roots:            []Root{{URI: "file:///w"}},
		ElicitationReply: json.RawMessage(`{"action":"decline"}`),
	})
	reqs := []struct{ id, method, want string }{
		{`1`, "ping", `"result":{}`},
		{`"r"`, "roots/list", `"result":{"roots":[{"uri":"file:///w"}]}`},
		{`3`, "sampling/createMessage", `"code":-32601`},
		{`4`, "elicitation/create", `"result":{"action":"decline"}`},
		{`5`, "tools/list", `"code":-32601`},
	}
	for _, r := range reqs {
		f.send(`{"jsonrpc":"2.0","id":` + r.id + `,"method":"` + r.method + `","params":{}}`)
		select {
		case a := <-answers:
			if string(a.ID) != r.id || !strings.Contains(string(a.raw), r.want) {
				t.Errorf("%s: answer %s, want id %s and %s", r.method, a.raw, r.id, r.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no answer", r.method)
		}
	}
	// Capabilities declared match what is configured.
	var p struct{ Capabilities map[string]json.RawMessage }
	_ = json.Unmarshal(f.received("initialize")[0].Params, &p)
	if _, ok := p.Capabilities["roots"]; !ok {
		t.Error("roots not declared")
	}
	if _, ok := p.Capabilities["sampling"]; ok {
		t.Error("sampling declared without a reply")
	}
	if _, ok := p.Capabilities["elicitation"]; !ok {
		t.Error("elicitation not declared")
	}
	_ = s
}

func TestHTTPStatusErrors(t *testing.T) {
	cases := []struct {
		name string
		st   *transport.StatusError
		want Category
		hint string
	}{
		{"unauthorized", &transport.StatusError{Status: 401, Body: []byte("no token")}, ServerError, "Authorization"},
		{"forbidden", &transport.StatusError{Status: 403}, ServerError, "Authorization"},
		{"bad request with JSON-RPC body", &transport.StatusError{Status: 400, Body: []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad"}}`)}, ProtocolError, ""},
		{"server error", &transport.StatusError{Status: 502, Body: []byte("bad gateway")}, ServerError, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, d := newFake(t, nil)
			s := open(t, d, nil)
			f.end.SetSendHook(func(_ context.Context, frame []byte) error {
				if bytes.Contains(frame, []byte(`"tools/call"`)) {
					return tc.st
				}
				return nil
			})
			_, err := s.CallTool(context.Background(), "x", nil, nil)
			var e *Error
			if !errors.As(err, &e) || e.Category != tc.want || !strings.Contains(e.Hint, tc.hint) {
				t.Fatalf("err %v (hint %q), want %s", err, e.Hint, tc.want)
			}
		})
	}
}

func TestSessionGoneReinitializes(t *testing.T) {
	f, d := newFake(t, nil)
	s := open(t, d, nil)
	f.end.SetSessionID("s1")
	failed := false
	f.end.SetSendHook(func(_ context.Context, frame []byte) error {
		if bytes.Contains(frame, []byte(`"tools/call"`)) && !failed {
			failed = true
			return &transport.StatusError{Status: 404, SessionID: "s1"}
		}
		return nil
	})
	res, err := s.CallTool(context.Background(), "x", map[string]any{"k": "v"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.end.Resets() != 1 || len(f.received("initialize")) != 2 {
		t.Errorf("resets %d initializes %d", f.end.Resets(), len(f.received("initialize")))
	}
	if string(res.StructuredContent) != `{"k":"v"}` {
		t.Errorf("result %s", res.Raw)
	}
}

// fallbackDialer refuses the legacy handshake with 405 and offers a fallback dialer.
type fallbackDialer struct {
	first    transport.Dialer
	fallback transport.Dialer
}

func (d fallbackDialer) Dial(ctx context.Context) (transport.Conn, error) { return d.first.Dial(ctx) }
func (d fallbackDialer) Fallback() transport.Dialer                       { return d.fallback }

func TestHTTPFallbackToLegacySSE(t *testing.T) {
	c, end := pipe.New()
	end.SetSendHook(func(context.Context, []byte) error { return &transport.StatusError{Status: 405} })
	defer end.Close()
	f, d2 := newFake(t, nil)
	s := open(t, fallbackDialer{first: connDialer{c}, fallback: d2}, nil)
	if s.Era() != EraLegacy || len(f.received("initialize")) != 1 || len(f.received("server/discover")) != 0 {
		t.Fatalf("era %s frames %d", s.Era(), len(f.received("")))
	}
	if _, err := s.CallTool(context.Background(), "x", nil, nil); err != nil {
		t.Fatal(err)
	}
}

func TestRawAccess(t *testing.T) {
	var frames []string
	f, d := newFake(t, func(f *fake, m msg) {
		if m.Method == "custom/echo" {
			f.result(m, `{"echo":`+string(m.Params)+`}`)
			return
		}
		if m.Method == "" && m.ID == nil {
			// Garbage: answer like a server that could not parse it.
			f.send(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)
			return
		}
		f.defaults(m)
	})
	s := open(t, d, &Options{OnFrame: func(dir Direction, fr transport.Frame) {
		if dir == Sent {
			frames = append(frames, string(fr.Data))
		}
	}})
	id := s.NextID()
	frame := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"custom/echo","params":[1,2]}`, id)
	res, err := s.RequestRaw(context.Background(), id, frame, 0)
	if err != nil || string(res.Result) != `{"echo":[1,2]}` || res.ID != id {
		t.Fatalf("RequestRaw: %+v %v", res, err)
	}
	if got := f.received("custom/echo")[0].raw; !bytes.Equal(got, frame) {
		t.Errorf("raw frame changed: %s", got)
	}
	if err := s.SendRaw(context.Background(), []byte("not json")); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 5*time.Second, "parse-error finding", func() bool { return len(s.Findings()) == 1 })
	if fs := s.Findings(); fs[0].Category != ProtocolError {
		t.Errorf("finding %+v", fs[0])
	}
	if frames[len(frames)-1] != "not json" {
		t.Errorf("OnFrame did not see the raw frame")
	}
	// An id already pending is refused.
	go func() { _, _ = s.RequestRaw(context.Background(), 424242, []byte(`{}`), time.Second) }()
	poll.Until(t, 5*time.Second, "raw call pending", func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.sh.pending[424242] != nil })
	if _, err := s.RequestRaw(context.Background(), 424242, []byte(`{}`), 0); !errors.Is(err, ErrIDInUse) {
		t.Errorf("duplicate id: %v", err)
	}
}

func TestPingAndSetLevelPerEra(t *testing.T) {
	f, d := newFake(t, func(f *fake, m msg) {
		f.stateless = true
		f.defaults(m)
	})
	s := open(t, d, nil)
	if err := s.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(f.received("server/discover")); n != 2 {
		t.Errorf("stateless ping sent %d discovers", n)
	}
	if err := s.SetLogLevel(context.Background(), "debug"); !errors.Is(err, ErrNotInEra) {
		t.Errorf("SetLogLevel: %v", err)
	}
}

// TestBlockingSend covers transports whose Send returns only once the answer is known (HTTP
// with a JSON response): the call's deadlines must bound Send itself.
func TestBlockingSend(t *testing.T) {
	blockUntilDone := func(ctx context.Context, frame []byte) error {
		if bytes.Contains(frame, []byte(`"tools/call"`)) {
			<-ctx.Done()
			return fmt.Errorf("POST: %w", ctx.Err())
		}
		return nil
	}
	slowThenDeliver := func(_ context.Context, frame []byte) error {
		if bytes.Contains(frame, []byte(`"tools/call"`)) {
			time.Sleep(80 * time.Millisecond) // the server works while the POST is open
		}
		return nil
	}
	cases := []struct {
		name   string
		opts   Options
		hook   func(context.Context, []byte) error
		want   Category
		cancel bool // notifications/cancelled expected
	}{
		{"timeout bounds Send", Options{RequestTimeout: 50 * time.Millisecond}, blockUntilDone, Timeout, true},
		{"deadlock bounds Send", Options{HangThreshold: 20 * time.Millisecond, HangGrace: 30 * time.Millisecond}, blockUntilDone, Deadlock, true},
		{"late answer through Send is a hang", Options{HangThreshold: 30 * time.Millisecond, HangGrace: time.Second}, slowThenDeliver, Hang, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, d := newFake(t, nil)
			o := tc.opts
			s := open(t, d, &o)
			f.end.SetSendHook(tc.hook)
			start := time.Now()
			_, err := s.CallTool(context.Background(), "x", nil, nil)
			var e *Error
			if !errors.As(err, &e) || e.Category != tc.want {
				t.Fatalf("err %v, want %s", err, tc.want)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("returned after %v", took)
			}
			if tc.cancel {
				checkCancelledSent(t, e, s, f)
			}
			if tc.want == Hang && (e.Response == nil || e.Response.Timing.Latency < 80*time.Millisecond) {
				t.Errorf("hang without the late response: %+v", e.Response)
			}
		})
	}
}

// cancellerConn cancels requests itself, as Streamable HTTP does in the stateless era.
type cancellerConn struct {
	transport.Conn
	mu  sync.Mutex // guards ids
	ids []int64
}

func (c *cancellerConn) CancelRequest(id int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ids = append(c.ids, id)
	return true
}

func TestStatelessCancellation(t *testing.T) {
	for _, withCanceller := range []bool{false, true} {
		t.Run(fmt.Sprintf("canceller=%v", withCanceller), func(t *testing.T) {
			f, d := newFake(t, func(f *fake, m msg) {
				f.stateless = true
				if m.Method != "tools/call" {
					f.defaults(m)
				}
			})
			cc := &cancellerConn{}
			if withCanceller {
				conn, _ := d.Dial(context.Background())
				cc.Conn = conn
				d = connDialer{cc}
			}
			s := open(t, d, &Options{RequestTimeout: 40 * time.Millisecond})
			_, err := s.CallTool(context.Background(), "never", nil, nil)
			var e *Error
			if !errors.As(err, &e) || e.Category != Timeout {
				t.Fatalf("err %v", err)
			}
			if !withCanceller {
				checkCancelledSent(t, e, s, f)
				return
			}
			cc.mu.Lock()
			defer cc.mu.Unlock()
			if len(cc.ids) != 1 || cc.ids[0] != e.ID {
				t.Errorf("CancelRequest ids %v, want [%d]", cc.ids, e.ID)
			}
			if n := len(f.received("notifications/cancelled")); n != 0 {
				t.Errorf("%d notifications/cancelled sent although the connection cancelled", n)
			}
		})
	}
}

// checkHandshake asserts the era and version a session settled on, that the transport was told
// the version, that a tools/call works, and which handshake methods the fake saw, in order.
func checkHandshake(t *testing.T, s *Session, f *fake, era Era, version string, methods []string) {
	t.Helper()
	if s.Era() != era || s.ProtocolVersion() != version {
		t.Fatalf("era %s version %s, want %s %s", s.Era(), s.ProtocolVersion(), era, version)
	}
	if f.end.ProtocolVersion() != version {
		t.Errorf("transport told version %q", f.end.ProtocolVersion())
	}
	// One request proves the session works; the fake answers in order, so once it returns every
	// late handshake answer has been read too.
	if _, err := s.CallTool(context.Background(), "echo", map[string]any{"a": "b"}, nil); err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	var got []string
	for _, m := range f.received("") {
		if m.Method != "tools/call" {
			got = append(got, m.Method)
		}
	}
	if diff := cmp.Diff(methods, got); diff != "" {
		t.Errorf("handshake (-want +got):\n%s", diff)
	}
}
