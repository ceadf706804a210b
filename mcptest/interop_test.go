package mcptest_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestInteropGoSDKClient proves mcptest is a conformant server for the official Go SDK client
// over every transport they share, in the legacy era and (Streamable HTTP) the stateless one.
func TestInteropGoSDKClient(t *testing.T) {
	s := mcptest.NewServer(nil)
	t.Cleanup(s.Close)
	modern := mcptest.NewServer(&mcptest.Options{Era: mcptest.EraStateless})
	t.Cleanup(modern.Close)
	legacy := mcptest.NewServer(&mcptest.Options{Era: mcptest.EraLegacy})
	t.Cleanup(legacy.Close)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr}

	tests := []struct {
		name      string
		version   string // "" lets the SDK pick: server/discover first, then initialize
		transport func(t *testing.T) mcp.Transport
	}{
		{"streamable legacy", "2025-11-25", func(*testing.T) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: hc, MaxRetries: -1}
		}},
		{"streamable 2025-03-26", "2025-03-26", func(*testing.T) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: hc, MaxRetries: -1}
		}},
		{"streamable both eras, SDK default", "", func(*testing.T) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: hc, MaxRetries: -1}
		}},
		{"streamable stateless only", "", func(*testing.T) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: modern.URL, HTTPClient: hc, MaxRetries: -1}
		}},
		{"streamable legacy only, SDK falls back from discover", "", func(*testing.T) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: legacy.URL, HTTPClient: hc, MaxRetries: -1}
		}},
		{"sse", "2024-11-05", func(*testing.T) mcp.Transport {
			return &mcp.SSEClientTransport{Endpoint: s.SSEURL, HTTPClient: hc}
		}},
		{"stdio pipes", "2025-11-25", func(t *testing.T) mcp.Transport {
			cr, sw := io.Pipe()
			sr, cw := io.Pipe()
			b := mcptest.NewBackend(nil)
			done := make(chan error, 1)
			go func() { done <- b.ServeConn(context.Background(), sr, sw) }()
			t.Cleanup(func() {
				_ = cw.Close()
				select {
				case <-done:
				case <-time.After(waitFor):
					t.Error("ServeConn did not end")
				}
				b.Close()
			})
			return &mcp.IOTransport{Reader: cr, Writer: cw}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), waitFor)
			defer cancel()
			client := mcp.NewClient(&mcp.Implementation{Name: "interop", Version: "1.0.0"}, nil)
			cs, err := client.Connect(ctx, tt.transport(t), &mcp.ClientSessionOptions{ProtocolVersion: tt.version})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()

			var names []string
			for tool, err := range cs.Tools(ctx, nil) {
				if err != nil {
					t.Fatalf("list tools: %v", err)
				}
				names = append(names, tool.Name)
			}
			if len(names) < 5 || names[0] != "echo" {
				t.Errorf("tools %v", names)
			}

			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "interop"}})
			if err != nil || res.IsError || len(res.Content) != 1 {
				t.Fatalf("call echo: %v %+v", err, res)
			}
			if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "interop" {
				t.Errorf("echo content %#v", res.Content[0])
			}
			sum, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 40}})
			if err != nil || sum.IsError {
				t.Fatalf("call add: %v %+v", err, sum)
			}
			if m, ok := sum.StructuredContent.(map[string]any); !ok || m["sum"] != float64(42) {
				t.Errorf("add structuredContent %#v", sum.StructuredContent)
			}
			bad, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": "x"}})
			if err != nil || !bad.IsError {
				t.Errorf("invalid arguments: %v %+v, want an isError result", err, bad)
			}

			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mcptest://static/hello.txt"})
			if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "Hello from mcptest.\n" {
				t.Errorf("read resource: %v %+v", err, rr)
			}
			blob, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mcptest://static/pixel.png"})
			if err != nil || len(blob.Contents) != 1 || len(blob.Contents[0].Blob) == 0 {
				t.Errorf("read blob: %v %+v", err, blob)
			}
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mcptest://missing"}); err == nil {
				t.Error("reading a missing resource succeeded")
			}

			pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Grace"}})
			if err != nil || len(pr.Messages) != 1 {
				t.Fatalf("get prompt: %v %+v", err, pr)
			}
			if tc, ok := pr.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Please greet Grace in a warm way." {
				t.Errorf("prompt content %#v", pr.Messages[0].Content)
			}

			comp, err := cs.Complete(ctx, &mcp.CompleteParams{
				Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "greet"},
				Argument: mcp.CompleteParamsArgument{Name: "name", Value: "Gr"},
			})
			if err != nil || len(comp.Completion.Values) != 1 || comp.Completion.Values[0] != "Grace" {
				t.Errorf("complete: %v %+v", err, comp)
			}
			if v := cs.InitializeResult().ProtocolVersion; tt.version == "" && v == "" {
				t.Errorf("no negotiated version")
			}
		})
	}
	// The stateless-only server was used without any session; the legacy-only one through
	// initialize after the SDK's server/discover probe failed.
	if st := modern.Stats(); st.Sessions != 0 || st.ToolCalls != 3 {
		t.Errorf("stateless-only server stats %+v, want 3 tool calls and no session", st)
	}
	if st := legacy.Stats(); st.Sessions != 1 || st.ToolCalls != 3 {
		t.Errorf("legacy-only server stats %+v, want 3 tool calls in 1 session", st)
	}
}
