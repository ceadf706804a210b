package interop

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpspec/mcpspec/session"
)

// routeSchema is the input schema of the peer's "route" tool: four x-mcp-header annotations
// (SEP-2243), one of them on a nested property, and an argument without one.
const routeSchema = `{
	"type": "object",
	"properties": {
		"region":   {"type": "string",  "x-mcp-header": "Region"},
		"priority": {"type": "integer", "x-mcp-header": "Priority"},
		"urgent":   {"type": "boolean", "x-mcp-header": "Urgent"},
		"target":   {"type": "object", "properties": {"shard": {"type": "string", "x-mcp-header": "Shard"}}},
		"text":     {"type": "string"}
	},
	"required": ["region"]
}`

// newParamPeer is a go-sdk v1.8.0 server whose "route" tool annotates its arguments with
// x-mcp-header; the tool answers with the Mcp-Param-* headers its request carried, as JSON.
func newParamPeer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "param-peer", Version: "1.0.0"}, &mcp.ServerOptions{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	srv.AddTool(&mcp.Tool{Name: "route", Description: "reports its Mcp-Param-* headers", InputSchema: json.RawMessage(routeSchema)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			seen := map[string]string{}
			if req.Extra != nil {
				for k, vs := range req.Extra.Header {
					if strings.HasPrefix(k, "Mcp-Param-") {
						seen[k] = strings.Join(vs, ",")
					}
				}
			}
			b, err := json.Marshal(seen)
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
		})
	return srv
}

// TestGoSDKParamHeaders calls a go-sdk v1.8.0 server's tool whose arguments carry x-mcp-header
// annotations. In the stateless era the SDK answers a tools/call without the matching
// Mcp-Param-* headers with HTTP 400 and -32020; the session mirrors the arguments into them,
// encoding what is not safe header text. A legacy session sends none and the SDK asks for none.
func TestGoSDKParamHeaders(t *testing.T) {
	t.Parallel()
	opts := []struct {
		name string
		opts mcp.StreamableHTTPOptions
	}{
		{"stateless-json", mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}},
		{"stateless-sse", mcp.StreamableHTTPOptions{Stateless: true}},
	}
	calls := []struct {
		name string
		args map[string]any
		want map[string]string
	}{
		{
			name: "all",
			args: map[string]any{"region": "eu-west-1", "priority": 7, "urgent": true, "target": map[string]any{"shard": "s-42"}, "text": "hi"},
			want: map[string]string{"Mcp-Param-Region": "eu-west-1", "Mcp-Param-Priority": "7", "Mcp-Param-Urgent": "true", "Mcp-Param-Shard": "s-42"},
		},
		{
			name: "non-ascii and padded",
			args: map[string]any{"region": "Zürich", "target": map[string]any{"shard": " s1 "}},
			want: map[string]string{"Mcp-Param-Region": "=?base64?WsO8cmljaA==?=", "Mcp-Param-Shard": "=?base64?IHMxIA==?="},
		},
		{
			name: "optional absent, integral float",
			args: map[string]any{"region": "us", "priority": 3.0, "urgent": false},
			want: map[string]string{"Mcp-Param-Region": "us", "Mcp-Param-Priority": "3", "Mcp-Param-Urgent": "false"},
		},
	}
	for _, o := range opts {
		t.Run(o.name, func(t *testing.T) {
			o.opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			srv := newParamPeer()
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &o.opts)
			hs := newLoopbackServer(t, h)
			ctx, cancel := context.WithTimeout(context.Background(), eventWait)
			defer cancel()

			log := newFrameLog()
			s := openSession(t, ctx, streamableDialer(t, hs.URL), &session.Options{OnFrame: log.hook})
			if s.Era() != session.EraStateless {
				t.Fatalf("era %s, want stateless", s.Era())
			}
			// Never listed: the SDK answers -32020, the session lists the tools once and retries.
			checkRoute(t, ctx, s, calls[0].args, calls[0].want)
			if n := log.count("tools/list"); n != 1 {
				t.Errorf("tools/list sent %d times for the unlisted tool, want 1", n)
			}
			if n := log.count("tools/call"); n != 2 {
				t.Errorf("tools/call sent %d times for the unlisted tool, want 2 (one retry)", n)
			}
			for _, c := range calls {
				t.Run(c.name, func(t *testing.T) { checkRoute(t, ctx, s, c.args, c.want) })
			}
			if n := log.count("tools/list"); n != 1 {
				t.Errorf("tools/list sent %d times in all, want 1: a listed tool needs no other", n)
			}
			if n := log.count("tools/call"); n != 2+len(calls) {
				t.Errorf("tools/call sent %d times in all, want %d", n, 2+len(calls))
			}
			checkFindings(t, s, log)
		})
	}

	t.Run("legacy", func(t *testing.T) {
		srv := newParamPeer()
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
			&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		hs := newLoopbackServer(t, h)
		ctx, cancel := context.WithTimeout(context.Background(), eventWait)
		defer cancel()
		s := openSession(t, ctx, streamableDialer(t, hs.URL), &session.Options{ProtocolVersion: session.Version20251125})
		if _, err := s.ListTools(ctx); err != nil {
			t.Fatalf("ListTools: %v", err)
		}
		checkRoute(t, ctx, s, calls[0].args, map[string]string{})
	})
}

// checkRoute calls route with args and compares the Mcp-Param-* headers the peer saw.
func checkRoute(t *testing.T, ctx context.Context, s *session.Session, args map[string]any, want map[string]string) {
	t.Helper()
	res, err := s.CallTool(ctx, "route", args, nil)
	if err != nil {
		t.Fatalf("CallTool(route, %v): %v", args, err)
	}
	if res.IsError {
		t.Fatalf("CallTool(route, %v): tool error %s", args, res.Raw)
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(textContent(t, res.Content)), &got); err != nil {
		t.Fatalf("route result %s: %v", res.Raw, err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Mcp-Param-* headers the server saw (-want +got):\n%s", d)
	}
}
