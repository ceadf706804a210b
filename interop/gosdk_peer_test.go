package interop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/pipe"
)

// The go-sdk peer: one mcp.Server with typed tools (input and output schemas inferred by the SDK),
// a resource and a prompt. Tests start it behind every transport the SDK offers.

const (
	goPeerName    = "gosdk-peer"
	goPeerVersion = "1.2.3"
	// goPeerPageSize is small so that tools/list needs several pages.
	goPeerPageSize = 2
	goPeerURI      = "mem://greeting"
	goPeerText     = "hello from go-sdk"
)

type echoIn struct {
	Message string `json:"message" jsonschema:"the text to echo back"`
}

type echoOut struct {
	Echo   string `json:"echo"`
	Length int    `json:"length"`
}

type countIn struct {
	Steps int `json:"steps" jsonschema:"how many progress notifications to send"`
}

type countOut struct {
	Counted int `json:"counted"`
}

type slowIn struct {
	Millis int `json:"millis" jsonschema:"how long to block unless cancelled"`
}

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type addOut struct {
	Sum int `json:"sum"`
}

// goPeer builds the SDK server and records what its handlers observed.
type goPeer struct {
	srv *mcp.Server
	// cancelled receives the argument of every slow call whose context the SDK cancelled, which
	// happens when the client's cancellation reaches the server; finished, that of every slow
	// call that ran to its end.
	cancelled, finished chan int
}

// goPeerTools lists the peer's tool names in the order tools/list returns them (sorted).
var goPeerTools = []string{"add", "count", "echo", "fail", "slow"}

func newGoPeer() *goPeer {
	p := &goPeer{cancelled: make(chan int, 8), finished: make(chan int, 8)}
	p.srv = mcp.NewServer(&mcp.Implementation{Name: goPeerName, Version: goPeerVersion}, &mcp.ServerOptions{
		Instructions: "interop peer",
		PageSize:     goPeerPageSize,
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	mcp.AddTool(p.srv, &mcp.Tool{Name: "echo", Description: "echoes message"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
			return nil, echoOut{Echo: in.Message, Length: len([]rune(in.Message))}, nil
		})
	mcp.AddTool(p.srv, &mcp.Tool{Name: "add", Description: "adds two integers"},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
			return nil, addOut{Sum: in.A + in.B}, nil
		})
	mcp.AddTool(p.srv, &mcp.Tool{Name: "count", Description: "reports progress once per step"},
		func(ctx context.Context, req *mcp.CallToolRequest, in countIn) (*mcp.CallToolResult, countOut, error) {
			tok := req.Params.GetProgressToken()
			for i := 1; i <= in.Steps && tok != nil; i++ {
				err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: tok,
					Progress:      float64(i),
					Total:         float64(in.Steps),
					Message:       fmt.Sprintf("step %d", i),
				})
				if err != nil {
					return nil, countOut{}, fmt.Errorf("notify progress: %w", err)
				}
			}
			return nil, countOut{Counted: in.Steps}, nil
		})
	mcp.AddTool(p.srv, &mcp.Tool{Name: "fail", Description: "always a tool error"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, errors.New("deliberate failure")
		})
	mcp.AddTool(p.srv, &mcp.Tool{Name: "slow", Description: "blocks until cancelled or millis pass"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in slowIn) (*mcp.CallToolResult, any, error) {
			select {
			case <-ctx.Done():
				select {
				case p.cancelled <- in.Millis:
				default:
				}
				return nil, nil, ctx.Err()
			case <-time.After(time.Duration(in.Millis) * time.Millisecond):
				select {
				case p.finished <- in.Millis:
				default:
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
			}
		})
	p.srv.AddResource(&mcp.Resource{URI: goPeerURI, Name: "greeting", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: req.Params.URI, MIMEType: "text/plain", Text: goPeerText},
			}}, nil
		})
	p.srv.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Hello, " + req.Params.Arguments["name"] + "!"}},
			}}, nil
		})
	return p
}

// pipeServerTransport serves a go-sdk server on the server end of an in-memory pipe: the
// session's frames arrive as whole messages, exactly as a stdio line would.
type pipeServerTransport struct{ end *pipe.ServerEnd }

func (t *pipeServerTransport) Connect(context.Context) (mcp.Connection, error) {
	return &pipeServerConn{end: t.end}, nil
}

type pipeServerConn struct{ end *pipe.ServerEnd }

func (c *pipeServerConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	b, err := c.end.Recv(ctx)
	if err != nil {
		return nil, err
	}
	return jsonrpc.DecodeMessage(b)
}

func (c *pipeServerConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	return c.end.Send(ctx, b)
}

func (c *pipeServerConn) Close() error { return c.end.Close() }

func (c *pipeServerConn) SessionID() string { return "" }

// onceDialer hands out one prepared connection; a second Dial fails.
type onceDialer struct {
	mu   sync.Mutex // guards conn
	conn transport.Conn
}

func (d *onceDialer) Dial(context.Context) (transport.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conn == nil {
		return nil, errors.New("onceDialer: already dialed")
	}
	c := d.conn
	d.conn = nil
	return c, nil
}
