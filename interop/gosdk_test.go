package interop

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/pipe"
)

// slowMillis is how long the slow tool blocks unless cancelled.
const slowMillis = 5000

// goPeerCase is one way of reaching the go-sdk peer.
type goPeerCase struct {
	name string
	// serve starts p behind a transport and returns a dialer for it; it registers its own cleanup.
	serve func(t *testing.T, p *goPeer) transport.Dialer
	// pin is Options.ProtocolVersion ("" detects the era).
	pin         string
	wantEra     session.Era
	wantVersion string
	// progress: the transport can carry notifications while a call is running.
	progress bool
	// cancel: a call the session gives up on (timeout) is cancelled at the peer: its handler's
	// context ends.
	cancel bool
	// notifyCancel: the session signals that with notifications/cancelled. The spec requires it
	// on stream transports (stdio and the like) in every era, and on HTTP before 2026-07-28; a
	// 2026-07-28 Streamable HTTP client cancels by closing the request's response stream instead.
	notifyCancel bool
}

// TestGoSDKPeer runs the session layer against the official Go SDK's server (v1.8.0) behind each
// of the SDK's transports. It needs nothing installed and always runs.
func TestGoSDKPeer(t *testing.T) {
	t.Parallel()
	cases := []goPeerCase{
		{
			// The SDK's io transports serve every version it knows, 2026-07-28 included, so era
			// detection over a stream (server/discover first) must find the stateless era.
			name: "pipe/detect", serve: servePipe,
			wantEra: session.EraStateless, wantVersion: session.Version20260728,
			progress: true, cancel: true, notifyCancel: true,
		},
		{
			name: "pipe/pin-2025-11-25", serve: servePipe, pin: session.Version20251125,
			wantEra: session.EraLegacy, wantVersion: session.Version20251125,
			progress: true, cancel: true, notifyCancel: true,
		},
		{
			name: "pipe/pin-2024-11-05", serve: servePipe, pin: session.Version20241105,
			wantEra: session.EraLegacy, wantVersion: session.Version20241105,
			progress: true, cancel: true, notifyCancel: true,
		},
	}
	cases = append(cases, goPeerNetCases()...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			exerciseGoPeer(t, c)
		})
	}
}

// servePipe connects the peer to the server end of an in-memory pipe.
func servePipe(t *testing.T, p *goPeer) transport.Dialer {
	t.Helper()
	conn, end := pipe.New()
	ss, err := p.srv.Connect(context.Background(), &pipeServerTransport{end: end}, nil)
	if err != nil {
		t.Fatalf("go-sdk Server.Connect: %v", err)
	}
	t.Cleanup(func() {
		_ = ss.Close()
		_ = ss.Wait()
	})
	return &onceDialer{conn: conn}
}

// exerciseGoPeer opens one session on the peer and checks every feature the peer offers.
func exerciseGoPeer(t *testing.T, c goPeerCase) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := newGoPeer()
	d := c.serve(t, p)
	log := newFrameLog()
	s := openSession(t, ctx, d, &session.Options{
		ProtocolVersion: c.pin,
		ConnectTimeout:  10 * time.Second,
		RequestTimeout:  10 * time.Second,
		OnFrame:         log.hook,
	})

	if got := s.Era(); got != c.wantEra {
		t.Errorf("Era() = %q, want %q", got, c.wantEra)
	}
	if got := s.ProtocolVersion(); got != c.wantVersion {
		t.Errorf("ProtocolVersion() = %q, want %q", got, c.wantVersion)
	}
	if got, want := s.ServerInfo(), (session.Implementation{Name: goPeerName, Version: goPeerVersion}); got.Name != want.Name || got.Version != want.Version {
		t.Errorf("ServerInfo() = %+v, want name %q version %q", got, want.Name, want.Version)
	}
	if got := s.Instructions(); got != "interop peer" {
		t.Errorf("Instructions() = %q, want %q", got, "interop peer")
	}
	// The handshake's legacy/stateless shape shows on the wire.
	if c.wantEra == session.EraStateless && log.count("initialize") != 0 {
		t.Errorf("stateless era, but the session sent initialize")
	}
	if c.wantEra == session.EraLegacy && log.count("initialize") != 1 {
		t.Errorf("legacy era: sent initialize %d times, want 1", log.count("initialize"))
	}

	t.Run("tools/list pages", func(t *testing.T) {
		before := log.count("tools/list")
		tools, err := s.ListTools(ctx)
		if err != nil {
			t.Fatalf("ListTools: %v", err)
		}
		if diff := cmp.Diff(goPeerTools, toolNames(tools)); diff != "" {
			t.Errorf("tool names (-want +got):\n%s", diff)
		}
		wantPages := (len(goPeerTools) + goPeerPageSize - 1) / goPeerPageSize
		if got := log.count("tools/list") - before; got != wantPages {
			t.Errorf("tools/list requests = %d, want %d (page size %d)", got, wantPages, goPeerPageSize)
		}
		echo := findTool(t, tools, "echo")
		if !schemaProperties(t, echo.InputSchema)["message"] {
			t.Errorf("echo inputSchema lacks message: %s", echo.InputSchema)
		}
		if out := schemaProperties(t, echo.OutputSchema); !out["echo"] || !out["length"] {
			t.Errorf("echo outputSchema = %s, want properties echo and length", echo.OutputSchema)
		}
		if len(echo.Raw) == 0 {
			t.Errorf("echo Raw is empty")
		}
	})

	t.Run("tools/call structured", func(t *testing.T) {
		for _, msg := range []string{"hello", "héllo wörld ✓", ""} {
			res, err := s.CallTool(ctx, "echo", map[string]any{"message": msg}, nil)
			if err != nil {
				t.Fatalf("CallTool echo %q: %v", msg, err)
			}
			if res.IsError {
				t.Fatalf("CallTool echo %q: isError: %s", msg, res.Raw)
			}
			var got echoOut
			if err := json.Unmarshal(res.StructuredContent, &got); err != nil {
				t.Fatalf("structuredContent %s: %v", res.StructuredContent, err)
			}
			if want := (echoOut{Echo: msg, Length: len([]rune(msg))}); got != want {
				t.Errorf("structuredContent = %+v, want %+v", got, want)
			}
			// The SDK mirrors structured output as JSON text for older clients.
			var mirrored echoOut
			if err := json.Unmarshal([]byte(textContent(t, res.Content)), &mirrored); err != nil || mirrored != got {
				t.Errorf("text content %q does not mirror structuredContent (%v)", textContent(t, res.Content), err)
			}
		}
		res, err := s.CallTool(ctx, "add", map[string]int{"a": 40, "b": 2}, nil)
		if err != nil || res.IsError {
			t.Fatalf("CallTool add: %v %s", err, res.Raw)
		}
		var sum addOut
		if err := json.Unmarshal(res.StructuredContent, &sum); err != nil || sum.Sum != 42 {
			t.Errorf("add structuredContent = %s, want sum 42 (%v)", res.StructuredContent, err)
		}
	})

	t.Run("tool errors", func(t *testing.T) {
		// The SDK validates arguments against the inferred schema: a tool error, not a Go error.
		res, err := s.CallTool(ctx, "echo", map[string]any{"message": 42}, nil)
		if err != nil {
			t.Fatalf("CallTool echo with a bad argument: %v", err)
		}
		if !res.IsError {
			t.Errorf("CallTool echo with a bad argument: isError false: %s", res.Raw)
		}
		res, err = s.CallTool(ctx, "fail", map[string]any{}, nil)
		if err != nil {
			t.Fatalf("CallTool fail: %v", err)
		}
		if !res.IsError || textContent(t, res.Content) != "deliberate failure" {
			t.Errorf("CallTool fail = %s, want isError with text %q", res.Raw, "deliberate failure")
		}
	})

	t.Run("unknown tool", func(t *testing.T) {
		_, err := s.CallTool(ctx, "no-such-tool", map[string]any{}, nil)
		se := sessionError(t, err)
		// go-sdk answers an unknown tool with JSON-RPC -32602 (invalid params).
		if se.Category != session.ProtocolError || se.Code != -32602 {
			t.Errorf("unknown tool: category %s code %d, want ProtocolError -32602 (%v)", se.Category, se.Code, err)
		}
		if se.Method != "tools/call" || se.ID == 0 {
			t.Errorf("unknown tool: method %q id %d, want tools/call and the request id", se.Method, se.ID)
		}
	})

	t.Run("resources", func(t *testing.T) {
		res, err := s.ListResources(ctx)
		if err != nil {
			t.Fatalf("ListResources: %v", err)
		}
		if len(res) != 1 || res[0].URI != goPeerURI || res[0].MimeType != "text/plain" {
			t.Errorf("ListResources = %+v, want one %s (text/plain)", res, goPeerURI)
		}
		r, err := s.ReadResource(ctx, goPeerURI)
		if err != nil {
			t.Fatalf("ReadResource: %v", err)
		}
		if uri, text := resourceText(t, r.Result); uri != goPeerURI || text != goPeerText {
			t.Errorf("ReadResource = %s %q, want %s %q", uri, text, goPeerURI, goPeerText)
		}
	})

	t.Run("prompts", func(t *testing.T) {
		prompts, err := s.ListPrompts(ctx)
		if err != nil {
			t.Fatalf("ListPrompts: %v", err)
		}
		if len(prompts) != 1 || prompts[0].Name != "greet" || len(prompts[0].Arguments) != 1 || !prompts[0].Arguments[0].Required {
			t.Errorf("ListPrompts = %+v, want greet with one required argument", prompts)
		}
		r, err := s.GetPrompt(ctx, "greet", map[string]string{"name": "Ada"})
		if err != nil {
			t.Fatalf("GetPrompt: %v", err)
		}
		if got := promptText(t, r.Result); got != "Hello, Ada!" {
			t.Errorf("GetPrompt text = %q, want %q", got, "Hello, Ada!")
		}
	})

	if c.progress {
		t.Run("progress", func(t *testing.T) {
			var pl progressLog
			res, err := s.CallTool(ctx, "count", map[string]int{"steps": 3}, &session.CallOptions{OnProgress: pl.add})
			if err != nil || res.IsError {
				t.Fatalf("CallTool count: %v %s", err, res.Raw)
			}
			want := []session.Progress{
				{Progress: 1, Total: 3, Message: "step 1"},
				{Progress: 2, Total: 3, Message: "step 2"},
				{Progress: 3, Total: 3, Message: "step 3"},
			}
			if diff := cmp.Diff(want, pl.all()); diff != "" {
				t.Errorf("progress (-want +got):\n%s", diff)
			}
		})
	}

	// Before the timeout below: what a server sends after a cancellation is not judged here.
	checkFindings(t, s, log)

	if c.cancel {
		t.Run("timeout cancels", func(t *testing.T) {
			start := time.Now()
			_, err := s.CallTool(ctx, "slow", map[string]int{"millis": slowMillis}, &session.CallOptions{Timeout: 200 * time.Millisecond})
			se := sessionError(t, err)
			if se.Category != session.Timeout {
				t.Fatalf("slow call: category %s, want Timeout (%v)", se.Category, err)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("a call with a 200ms timeout returned after %v", took.Round(time.Millisecond))
			}
			if c.notifyCancel {
				log.waitCancelled(t, se.ID)
			}
			select {
			case got := <-p.cancelled:
				if got != slowMillis {
					t.Errorf("the peer cancelled a slow call with millis %d, want %d", got, slowMillis)
				}
			case <-p.finished:
				t.Fatalf("the peer's handler ran to its end (%dms): the cancellation never reached it", slowMillis)
			case <-time.After(eventWait):
				t.Fatalf("the peer's handler was not cancelled within %v", eventWait)
			}
			// The session is still usable after a timed-out call.
			if res, err := s.CallTool(ctx, "echo", map[string]string{"message": "after"}, nil); err != nil || res.IsError {
				t.Errorf("echo after a timeout: %v", err)
			}
		})
	}
}
