package sse

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGoSDKInterop runs a 2024-11-05 handshake and a tool call against the official Go SDK's
// HTTP+SSE handler.
func TestGoSDKInterop(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "sdk", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	srv := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil))
	defer srv.Close()

	c := dial(t, Dialer{URL: srv.URL})
	if !strings.HasPrefix(c.Endpoint(), srv.URL) || !strings.Contains(c.Endpoint(), "?") {
		t.Errorf("endpoint %q", c.Endpoint())
	}
	ctx := context.Background()
	steps := []struct{ frame, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"mcpspec","version":"0"}}}`, `"protocolVersion":"2024-11-05"`},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, ""},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi there"}}}`, "hi there"},
	}
	for _, st := range steps {
		if err := c.Send(ctx, []byte(st.frame)); err != nil {
			t.Fatalf("Send %s: %v", st.frame, err)
		}
		if st.want == "" {
			continue
		}
		f, err := recv(t, c)
		if err != nil || !json.Valid(f.Data) || !strings.Contains(string(f.Data), st.want) {
			t.Fatalf("answer to %s: %s %v", st.frame, f.Data, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}
