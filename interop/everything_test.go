//go:build linux

package interop

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport"
)

// server-everything is the MCP project's own feature showcase (TypeScript SDK). Its tools,
// resources and prompts used below were read from the installed dist/ code:
//   - dist/index.js takes the transport as argv[2]: stdio | sse | streamableHttp;
//   - the HTTP transports listen on $PORT (Express app.listen(PORT), no host: loopback.cjs pins
//     it to 127.0.0.1), Streamable HTTP at /mcp, legacy SSE at GET /sse + POST /message;
//   - echo {message} → text "Echo: <message>";
//   - trigger-long-running-operation {duration (s), steps} → one progress per step when a
//     progressToken is sent, each after duration/steps seconds;
//   - get-structured-content {location} → structuredContent with an outputSchema;
//   - an unknown tool is answered as a tool error (isError, "Tool <name> not found"), not as a
//     JSON-RPC error: the SDK's McpServer wraps every tools/call failure but URL elicitation;
//   - an unknown prompt is a JSON-RPC -32602; an unknown method -32601.
// Never call gzip-file-as-resource: by default it fetches a public URL.

const everythingPkg = "@modelcontextprotocol/server-everything"

// TestEverything runs the session layer against server-everything over each of its transports.
func TestEverything(t *testing.T) {
	t.Parallel()
	p := requireNodePeer(t, everythingPkg)
	cases := []struct {
		name string
		dial func(t *testing.T) transport.Dialer
	}{
		{"stdio", func(t *testing.T) transport.Dialer {
			return stdioDialer(t, []string{p.node, p.entry, "stdio"}, peerEnvExtra, t.TempDir())
		}},
		{"streamableHttp", func(t *testing.T) transport.Dialer {
			srv := startHTTPPeer(t, p, "streamableHttp")
			return streamableDialer(t, srv.base+"/mcp")
		}},
		{"sse", func(t *testing.T) transport.Dialer {
			srv := startHTTPPeer(t, p, "sse")
			return sseDialer(t, srv.base+"/sse")
		}},
		{"auto/streamableHttp", func(t *testing.T) transport.Dialer {
			srv := startHTTPPeer(t, p, "streamableHttp")
			return autoDialer(t, srv.base+"/mcp")
		}},
		{"auto/sse", func(t *testing.T) transport.Dialer {
			// A plain URL SPEC: Streamable HTTP first, then the fallback to HTTP+SSE.
			srv := startHTTPPeer(t, p, "sse")
			return autoDialer(t, srv.base+"/sse")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			d := c.dial(t)
			log := newFrameLog()
			opts := &session.Options{
				ConnectTimeout: 20 * time.Second,
				RequestTimeout: 20 * time.Second,
				OnFrame:        log.hook,
			}
			var s *session.Session
			if c.name == "stdio" {
				s = openStdioSession(t, ctx, d, opts)
			} else {
				s = openSession(t, ctx, d, opts)
			}
			exerciseEverything(t, ctx, s, log)
		})
	}
}

// exerciseEverything checks what server-everything offers on one open session.
func exerciseEverything(t *testing.T, ctx context.Context, s *session.Session, log *frameLog) {
	// The TypeScript SDK (1.32) has no 2026-07-28: detection must land on the legacy handshake
	// and the SDK's newest version.
	if got := s.Era(); got != session.EraLegacy {
		t.Errorf("Era() = %q, want %q", got, session.EraLegacy)
	}
	if got := s.ProtocolVersion(); got != session.Version20251125 {
		t.Errorf("ProtocolVersion() = %q, want %q", got, session.Version20251125)
	}
	if got := s.ServerInfo().Name; got != "mcp-servers/everything" {
		t.Errorf("ServerInfo().Name = %q, want mcp-servers/everything", got)
	}
	var caps map[string]json.RawMessage
	if err := json.Unmarshal(s.ServerCapabilities(), &caps); err != nil {
		t.Errorf("ServerCapabilities() %s: %v", s.ServerCapabilities(), err)
	}
	for _, k := range []string{"tools", "resources", "prompts", "logging"} {
		if _, ok := caps[k]; !ok {
			t.Errorf("ServerCapabilities() lacks %q: %s", k, s.ServerCapabilities())
		}
	}
	if !strings.Contains(s.Instructions(), "Everything") {
		t.Errorf("Instructions() = %q, want the server's instructions document", textfmt.Excerpt([]byte(s.Instructions()), 80))
	}

	t.Run("ping", func(t *testing.T) {
		if err := s.Ping(ctx); err != nil {
			t.Errorf("Ping: %v", err)
		}
	})

	t.Run("tools/list", func(t *testing.T) {
		tools, err := s.ListTools(ctx)
		if err != nil {
			t.Fatalf("ListTools: %v", err)
		}
		names := toolNames(tools)
		for _, want := range []string{"echo", "get-sum", "get-structured-content", "trigger-long-running-operation"} {
			if !slices.Contains(names, want) {
				t.Errorf("tools/list lacks %q: %v", want, names)
			}
		}
		sorted := slices.Clone(names)
		slices.Sort(sorted)
		if len(slices.Compact(sorted)) != len(names) {
			t.Errorf("tools/list has duplicate names: %v", names)
		}
		if !schemaProperties(t, findTool(t, tools, "echo").InputSchema)["message"] {
			t.Errorf("echo inputSchema lacks message: %s", findTool(t, tools, "echo").InputSchema)
		}
		out := schemaProperties(t, findTool(t, tools, "get-structured-content").OutputSchema)
		if !out["temperature"] || !out["conditions"] || !out["humidity"] {
			t.Errorf("get-structured-content outputSchema = %s", findTool(t, tools, "get-structured-content").OutputSchema)
		}
	})

	t.Run("echo", func(t *testing.T) {
		for _, msg := range []string{"hello", "héllo wörld ✓ \"quoted\"\nsecond line"} {
			res, err := s.CallTool(ctx, "echo", map[string]string{"message": msg}, nil)
			if err != nil {
				t.Fatalf("CallTool echo: %v", err)
			}
			if res.IsError {
				t.Fatalf("CallTool echo: isError: %s", res.Raw)
			}
			if got, want := textContent(t, res.Content), "Echo: "+msg; got != want {
				t.Errorf("echo text = %q, want %q", got, want)
			}
		}
	})

	t.Run("get-sum", func(t *testing.T) {
		res, err := s.CallTool(ctx, "get-sum", map[string]float64{"a": 40, "b": 2.5}, nil)
		if err != nil || res.IsError {
			t.Fatalf("CallTool get-sum: %v %s", err, res.Raw)
		}
		if got, want := textContent(t, res.Content), "The sum of 40 and 2.5 is 42.5."; got != want {
			t.Errorf("get-sum text = %q, want %q", got, want)
		}
	})

	t.Run("structured content", func(t *testing.T) {
		res, err := s.CallTool(ctx, "get-structured-content", map[string]string{"location": "Chicago"}, nil)
		if err != nil || res.IsError {
			t.Fatalf("CallTool get-structured-content: %v %s", err, res.Raw)
		}
		type weather struct {
			Temperature float64 `json:"temperature"`
			Conditions  string  `json:"conditions"`
			Humidity    float64 `json:"humidity"`
		}
		var got weather
		if err := json.Unmarshal(res.StructuredContent, &got); err != nil {
			t.Fatalf("structuredContent %s: %v", res.StructuredContent, err)
		}
		if want := (weather{36, "Light rain / drizzle", 82}); got != want {
			t.Errorf("structuredContent = %+v, want %+v", got, want)
		}
	})

	t.Run("invalid arguments", func(t *testing.T) {
		// Input validation failures come back as tool errors (2025-11-25 behaviour).
		res, err := s.CallTool(ctx, "get-sum", map[string]string{"a": "one"}, nil)
		if err != nil {
			t.Fatalf("CallTool get-sum with bad arguments: %v", err)
		}
		if !res.IsError {
			t.Errorf("CallTool get-sum with bad arguments: isError false: %s", res.Raw)
		}
	})

	t.Run("progress", func(t *testing.T) {
		var pl progressLog
		res, err := s.CallTool(ctx, "trigger-long-running-operation",
			map[string]float64{"duration": 0.3, "steps": 3}, &session.CallOptions{OnProgress: pl.add})
		if err != nil || res.IsError {
			t.Fatalf("CallTool trigger-long-running-operation: %v %s", err, res.Raw)
		}
		want := []session.Progress{{Progress: 1, Total: 3}, {Progress: 2, Total: 3}, {Progress: 3, Total: 3}}
		if diff := cmp.Diff(want, pl.all()); diff != "" {
			t.Errorf("progress (-want +got):\n%s", diff)
		}
		if got := textContent(t, res.Content); !strings.Contains(got, "Steps: 3") {
			t.Errorf("result text = %q, want it to mention Steps: 3", got)
		}
	})

	t.Run("resources", func(t *testing.T) {
		res, err := s.ListResources(ctx)
		if err != nil {
			t.Fatalf("ListResources: %v", err)
		}
		var doc session.Resource
		for _, r := range res {
			if strings.HasPrefix(r.URI, "demo://resource/static/document/") && strings.HasSuffix(r.URI, ".md") {
				doc = r
				break
			}
		}
		if doc.URI == "" {
			t.Fatalf("ListResources: no static markdown document among %d resources", len(res))
		}
		if doc.MimeType != "text/markdown" {
			t.Errorf("%s mimeType = %q, want text/markdown", doc.URI, doc.MimeType)
		}
		r, err := s.ReadResource(ctx, doc.URI)
		if err != nil {
			t.Fatalf("ReadResource %s: %v", doc.URI, err)
		}
		uri, text := resourceText(t, r.Result)
		if uri != doc.URI || !strings.Contains(text, "#") {
			t.Errorf("ReadResource %s = %s, %q; want the same URI and markdown text", doc.URI, uri, textfmt.Excerpt([]byte(text), 80))
		}
		templates, err := s.ListResourceTemplates(ctx)
		if err != nil {
			t.Fatalf("ListResourceTemplates: %v", err)
		}
		if len(templates) == 0 || !strings.Contains(templates[0].URITemplate, "{") {
			t.Errorf("ListResourceTemplates = %+v, want RFC 6570 templates", templates)
		}
	})

	t.Run("prompts", func(t *testing.T) {
		prompts, err := s.ListPrompts(ctx)
		if err != nil {
			t.Fatalf("ListPrompts: %v", err)
		}
		var args *session.Prompt
		for i := range prompts {
			if prompts[i].Name == "args-prompt" {
				args = &prompts[i]
			}
		}
		if args == nil {
			t.Fatalf("ListPrompts lacks args-prompt: %+v", prompts)
		}
		// Descriptions are left out: the SDK drops the one of an optional zod argument.
		wantArgs := []session.PromptArgument{{Name: "city", Required: true}, {Name: "state"}}
		if diff := cmp.Diff(wantArgs, args.Arguments, cmpopts.IgnoreFields(session.PromptArgument{}, "Description")); diff != "" {
			t.Errorf("args-prompt arguments (-want +got):\n%s", diff)
		}
		for _, c := range []struct {
			name string
			args map[string]string
			want string
		}{
			{"simple-prompt", nil, "This is a simple prompt without arguments."},
			{"args-prompt", map[string]string{"city": "Paris"}, "What's weather in Paris?"},
			{"args-prompt", map[string]string{"city": "Austin", "state": "Texas"}, "What's weather in Austin, Texas?"},
		} {
			r, err := s.GetPrompt(ctx, c.name, c.args)
			if err != nil {
				t.Errorf("GetPrompt %s %v: %v", c.name, c.args, err)
				continue
			}
			if got := promptText(t, r.Result); got != c.want {
				t.Errorf("GetPrompt %s %v = %q, want %q", c.name, c.args, got, c.want)
			}
		}
	})

	t.Run("completion", func(t *testing.T) {
		r, err := s.Complete(ctx, map[string]string{"type": "ref/prompt", "name": "completable-prompt"}, "department", "Eng")
		if err != nil {
			t.Fatalf("Complete: %v", err)
		}
		var got struct {
			Completion struct {
				Values []string `json:"values"`
			} `json:"completion"`
		}
		if err := json.Unmarshal(r.Result, &got); err != nil {
			t.Fatalf("completion result %s: %v", r.Result, err)
		}
		if diff := cmp.Diff([]string{"Engineering"}, got.Completion.Values); diff != "" {
			t.Errorf("completion values (-want +got):\n%s", diff)
		}
	})

	t.Run("logging/setLevel", func(t *testing.T) {
		if err := s.SetLogLevel(ctx, "error"); err != nil {
			t.Errorf("SetLogLevel: %v", err)
		}
	})

	t.Run("errors", func(t *testing.T) {
		// Unknown tool: a tool error, not a JSON-RPC error, from this SDK.
		res, err := s.CallTool(ctx, "no-such-tool", map[string]any{}, nil)
		if err != nil {
			t.Fatalf("CallTool no-such-tool: %v (want a tool error result)", err)
		}
		if !res.IsError || !strings.Contains(textContent(t, res.Content), "no-such-tool not found") {
			t.Errorf("CallTool no-such-tool = %s, want isError with \"no-such-tool not found\"", res.Raw)
		}
		for _, c := range []struct {
			call func() error
			what string
			code int
		}{
			{func() error { _, err := s.GetPrompt(ctx, "no-such-prompt", nil); return err }, "unknown prompt", -32602},
			{func() error { _, err := s.Request(ctx, "no/such/method", map[string]any{}); return err }, "unknown method", -32601},
		} {
			se := sessionError(t, c.call())
			if se.Category != session.ProtocolError || se.Code != c.code {
				t.Errorf("%s: category %s code %d, want ProtocolError %d (%v)", c.what, se.Category, se.Code, c.code, se)
			}
		}
	})

	// Checked before the timeout below: what a server may send after a cancellation is not
	// something a well-behaved server is judged on.
	checkFindings(t, s, log)

	t.Run("timeout cancels", func(t *testing.T) {
		_, err := s.CallTool(ctx, "trigger-long-running-operation", map[string]float64{"duration": 20, "steps": 1},
			&session.CallOptions{Timeout: 300 * time.Millisecond})
		se := sessionError(t, err)
		if se.Category != session.Timeout {
			t.Fatalf("slow call: category %s, want Timeout (%v)", se.Category, err)
		}
		if se.Method != "tools/call" || se.ID == 0 {
			t.Errorf("slow call error: method %q id %d", se.Method, se.ID)
		}
		log.waitCancelled(t, se.ID)
		// The session keeps working after a timed-out call.
		res, err := s.CallTool(ctx, "echo", map[string]string{"message": "still here"}, nil)
		if err != nil || res.IsError || textContent(t, res.Content) != "Echo: still here" {
			t.Errorf("echo after a timeout: %v", err)
		}
	})

}
