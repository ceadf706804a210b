package session

import (
	"bufio"
	"context"
	"net"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGoSDKInterop runs the session against the official go-sdk server over net.Pipe, in the
// detected (stateless) era and with legacy versions pinned.
func TestGoSDKInterop(t *testing.T) {
	cases := []struct {
		pin     string
		era     Era
		version string
	}{
		{"", EraStateless, Version20260728},
		{Version20251125, EraLegacy, Version20251125},
		{Version20250618, EraLegacy, Version20250618},
		{Version20241105, EraLegacy, Version20241105},
	}
	for _, tc := range cases {
		t.Run("pin="+tc.pin, func(t *testing.T) {
			ctx := context.Background()
			c1, c2 := net.Pipe()
			server := mcp.NewServer(&mcp.Implementation{Name: "sdk", Version: "1.8.0"}, &mcp.ServerOptions{Instructions: "interop"})
			type in struct {
				Text string `json:"text"`
			}
			mcp.AddTool(server, &mcp.Tool{Name: "echo", Description: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, x in) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: x.Text}}}, nil, nil
			})
			ss, err := server.Connect(ctx, &mcp.IOTransport{Reader: c1, Writer: c1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ss.Close()
			conn := &lineConn{c: c2, r: bufio.NewReader(c2), w: bufio.NewWriter(c2)}
			s := open(t, connDialer{conn}, &Options{ProtocolVersion: tc.pin})
			if s.Era() != tc.era || s.ProtocolVersion() != tc.version {
				t.Fatalf("era %s version %s, want %s %s", s.Era(), s.ProtocolVersion(), tc.era, tc.version)
			}
			if s.Instructions() != "interop" {
				t.Errorf("instructions %q", s.Instructions())
			}
			tools, err := s.ListTools(ctx)
			if err != nil || len(tools) != 1 || tools[0].Name != "echo" || len(tools[0].InputSchema) == 0 {
				t.Fatalf("ListTools: %+v %v", tools, err)
			}
			res, err := s.CallTool(ctx, "echo", map[string]any{"text": "hi"}, nil)
			if err != nil || len(res.Content) != 1 || res.IsError {
				t.Fatalf("CallTool: %+v %v", res, err)
			}
			// Invalid arguments are a tool error (isError), not a JSON-RPC error.
			res, err = s.CallTool(ctx, "echo", map[string]any{"text": 5}, nil)
			if err != nil || !res.IsError {
				t.Errorf("bad args: %+v %v", res, err)
			}
			_, err = s.CallTool(ctx, "nope", nil, nil)
			if c := CategoryOf(err); c != ProtocolError && c != ServerError {
				t.Errorf("unknown tool: %v", err)
			}
			if err := s.Ping(ctx); err != nil {
				t.Errorf("Ping: %v", err)
			}
			if fs := s.Findings(); len(fs) != 0 {
				t.Errorf("findings %+v", fs)
			}
		})
	}
}
