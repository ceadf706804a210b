package streamable

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// goSDKServer serves the official Go SDK's Streamable HTTP handler with one tool, echo, and
// counts the DELETE requests it received.
func goSDKServer(t *testing.T, opts *mcp.StreamableHTTPOptions) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "sdk", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, opts)
	var deletes atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			deletes.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &deletes
}

// TestGoSDKInterop runs the legacy-era handshake and a tool call against the Go SDK's server in
// its SSE, JSON and stateless modes.
func TestGoSDKInterop(t *testing.T) {
	tests := []struct {
		name        string
		opts        *mcp.StreamableHTTPOptions
		wantSession bool
	}{
		{"sse answers", &mcp.StreamableHTTPOptions{}, true},
		{"json answers", &mcp.StreamableHTTPOptions{JSONResponse: true}, true},
		{"stateless", &mcp.StreamableHTTPOptions{Stateless: true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, deletes := goSDKServer(t, tt.opts)
			c := dial(t, Dialer{URL: srv.URL, OpenGETStream: true})
			send(t, c, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"mcpspec","version":"0"}}}`)
			var init struct {
				ID     int `json:"id"`
				Result struct {
					ProtocolVersion string `json:"protocolVersion"`
				} `json:"result"`
			}
			if f := recv(t, c); json.Unmarshal(f.Data, &init) != nil || init.ID != 1 || init.Result.ProtocolVersion != "2025-06-18" {
				t.Fatalf("initialize answer %s (%v)", f.Data, f.Err)
			}
			if got := c.SessionID() != ""; got != tt.wantSession {
				t.Fatalf("SessionID() = %q", c.SessionID())
			}
			c.SetProtocolVersion(init.Result.ProtocolVersion)
			send(t, c, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			send(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"héllo"}}}`)
			if f := recv(t, c); !strings.Contains(string(f.Data), `"id":2`) || !strings.Contains(string(f.Data), "héllo") {
				t.Fatalf("tools/call answer %s (%v)", f.Data, f.Err)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int32{true: 1, false: 0}[tt.wantSession]; deletes.Load() != want {
				t.Errorf("%d DELETE, want %d", deletes.Load(), want)
			}
			noLeaks(t, "session/transport/streamable.(*Conn)")
		})
	}
}
