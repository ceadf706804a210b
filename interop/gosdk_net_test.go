package interop

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport"
)

// goPeerNetCases reaches the go-sdk peer over real loopback sockets.
func goPeerNetCases() []goPeerCase {
	return []goPeerCase{
		{
			// Stateless + JSON responses: the SDK serves 2026-07-28 (server/discover, per-request
			// _meta, no session id). A JSON response cannot carry notifications. With
			// PropagateRequestCancellation the handler ends when the client drops the POST, the
			// 2026-07-28 way to cancel over HTTP.
			name: "streamable-stateless-json/detect", serve: serveStreamable(statelessJSON),
			wantEra: session.EraStateless, wantVersion: session.Version20260728,
			cancel: true,
		},
		{
			// Stateless with SSE responses: progress rides on the response stream.
			name: "streamable-stateless-sse/detect", serve: serveStreamable(statelessSSE),
			wantEra: session.EraStateless, wantVersion: session.Version20260728,
			progress: true, cancel: true,
		},
		{
			// A stateless server still answers a client pinned to a legacy version.
			name: "streamable-stateless-json/pin-2025-11-25", serve: serveStreamable(statelessJSON), pin: session.Version20251125,
			wantEra: session.EraLegacy, wantVersion: session.Version20251125,
		},
		{
			// Stateful: the SDK serves 2026-07-28 only in stateless mode; server/discover on a
			// stateful handler lists legacy versions only, so detection must fall back to
			// initialize and Mcp-Session-Id.
			name: "streamable-stateful/detect", serve: serveStreamable(&mcp.StreamableHTTPOptions{}),
			wantEra: session.EraLegacy, wantVersion: session.Version20251125,
			progress: true, cancel: true, notifyCancel: true,
		},
		{
			name: "streamable-stateful-json/detect", serve: serveStreamable(&mcp.StreamableHTTPOptions{JSONResponse: true}),
			wantEra: session.EraLegacy, wantVersion: session.Version20251125,
			cancel: true, notifyCancel: true,
		},
		{
			// The legacy HTTP+SSE transport (2024-11-05 shape); the SDK does not offer 2026-07-28 on it.
			name: "sse/detect", serve: serveSSE,
			wantEra: session.EraLegacy, wantVersion: session.Version20251125,
			progress: true, cancel: true, notifyCancel: true,
		},
		{
			// Newline-delimited JSON-RPC over a TCP socket: the SDK's IOTransport on one side,
			// our tcp transport on the other.
			name: "tcp/detect", serve: serveTCP,
			wantEra: session.EraStateless, wantVersion: session.Version20260728,
			progress: true, cancel: true, notifyCancel: true,
		},
	}
}

var (
	statelessJSON = &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, PropagateRequestCancellation: true}
	statelessSSE  = &mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true}
)

// serveStreamable serves the peer with the SDK's Streamable HTTP handler on 127.0.0.1.
func serveStreamable(opts *mcp.StreamableHTTPOptions) func(t *testing.T, p *goPeer) transport.Dialer {
	return func(t *testing.T, p *goPeer) transport.Dialer {
		t.Helper()
		o := *opts
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return p.srv }, &o)
		srv := newLoopbackServer(t, h)
		return streamableDialer(t, srv.URL+"/mcp")
	}
}

// serveSSE serves the peer with the SDK's legacy HTTP+SSE handler on 127.0.0.1.
func serveSSE(t *testing.T, p *goPeer) transport.Dialer {
	t.Helper()
	h := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return p.srv }, nil)
	srv := newLoopbackServer(t, h)
	return sseDialer(t, srv.URL+"/sse")
}

// newLoopbackServer starts h on 127.0.0.1 (httptest's default) and closes it when the test ends.
// Closing also ends the long-lived SSE streams the handlers hold open.
func newLoopbackServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = nil
	srv.Start()
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}

// serveTCP accepts one TCP connection on 127.0.0.1 and serves the peer on it with the SDK's
// IOTransport (newline-delimited JSON, the stdio framing).
func serveTCP(t *testing.T, p *goPeer) transport.Dialer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	done := make(chan struct{})
	var ss *mcp.ServerSession
	go func() {
		defer close(done)
		conn, err := ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				t.Errorf("accept: %v", err)
			}
			return
		}
		ss, err = p.srv.Connect(context.Background(), &mcp.IOTransport{Reader: conn, Writer: conn}, nil)
		if err != nil {
			t.Errorf("go-sdk Server.Connect: %v", err)
			_ = conn.Close()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
		if ss != nil {
			_ = ss.Close()
			_ = ss.Wait()
		}
	})
	return tcpDialer(t, ln.Addr().String())
}
