package session

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/session/transport/streamable"
)

// TestHTTPMalformedAnswerFailsItsRequestAtOnce: over Streamable HTTP a POST's JSON-less answer
// (an HTML page, an empty body, a body over the frame limit) can only be that request's answer,
// so the request fails as Malformed when it arrives, not at its deadline.
func TestHTTPMalformedAnswerFailsItsRequestAtOnce(t *testing.T) {
	const deadline = 20 * time.Second
	for _, tc := range []struct {
		name, ctype, body string
		wantMsg           string
	}{
		{"html page", "text/html", "<!doctype html><html><body>Welcome to nginx</body></html>", "not a JSON object"},
		{"plain text", "text/plain", "404 page not found", "not a JSON object"},
		{"empty 200", "application/json", "", "truncated"},
		{"too long", "application/json", `{"jsonrpc":"2.0","id":2,"result":"` + strings.Repeat("a", 4096) + `"}`, "frame of 4132 bytes exceeds the 1 KiB limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				switch {
				case strings.Contains(string(body), `"initialize"`):
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"jsonrpc":"2.0","id":`+idOf(string(body))+`,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"odd","version":"1"}}}`)
				case r.Method != http.MethodPost || !strings.Contains(string(body), `"id"`):
					w.WriteHeader(http.StatusAccepted)
				default:
					w.Header().Set("Content-Type", tc.ctype)
					io.WriteString(w, tc.body)
				}
			}))
			defer srv.Close()
			ctx := context.Background()
			s, err := Open(ctx, &streamable.Dialer{URL: srv.URL, MaxFrameSize: 1024},
				&Options{ProtocolVersion: "2025-06-18", RequestTimeout: deadline})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			start := time.Now()
			_, err = s.CallTool(ctx, "echo", map[string]any{"text": "hi"}, nil)
			var e *Error
			if !errors.As(err, &e) || e.Category != Malformed || !strings.Contains(e.Message, tc.wantMsg) {
				t.Fatalf("err = %v, want Malformed (%s)", err, tc.wantMsg)
			}
			if waited := time.Since(start); waited >= deadline/2 {
				t.Errorf("the call failed after %v: it waited for its deadline (%v)", waited, deadline)
			}
		})
	}
}

// idOf returns the raw id token of a one-line JSON-RPC request.
func idOf(body string) string {
	i := strings.Index(body, `"id":`)
	if i < 0 {
		return "null"
	}
	rest := body[i+5:]
	end := strings.IndexAny(rest, ",}")
	return rest[:end]
}

// TestHTTPHandshakeAnsweredWithHTML: an http:// URL that serves a web page fails the handshake as
// Malformed at once, with the page quoted, instead of waiting out the connect timeout.
func TestHTTPHandshakeAnsweredWithHTML(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><body>It works!</body></html>")
	}))
	defer srv.Close()
	const connect = 20 * time.Second
	start := time.Now()
	_, err := Open(context.Background(), &streamable.Dialer{URL: srv.URL}, &Options{ConnectTimeout: connect})
	var e *Error
	if !errors.As(err, &e) || e.Category != Malformed || !strings.Contains(string(e.Frame), "It works!") {
		t.Fatalf("err = %v, want Malformed quoting the page", err)
	}
	if waited := time.Since(start); waited >= connect/2 {
		t.Errorf("Open failed after %v: it waited for the connect timeout (%v)", waited, connect)
	}
}
