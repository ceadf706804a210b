package streamable

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestMessagesLargerThanTheConnectionBuffers sends and receives messages and header lines
// several times larger than NewClient's ConnBufferSize, over every answer framing, and checks
// that every byte arrives on both sides.
func TestMessagesLargerThanTheConnectionBuffers(t *testing.T) {
	big := func(n int) string { return strings.Repeat("x", n) }
	for _, tc := range []struct {
		name       string
		argSize    int    // bytes of the request's argument
		resultSize int    // bytes of the answer's text
		framing    string // "length", "chunked" or "sse"
	}{
		{"small/length", 10, 10, "length"},
		{"large request/length", 300 << 10, 10, "length"},
		{"large answer/length", 10, 300 << 10, "length"},
		{"large answer/chunked", 10, 300 << 10, "chunked"},
		{"large answer/sse", 10, 300 << 10, "sse"},
		{"both large/chunked", 100 << 10, 100 << 10, "chunked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			longHeader := big(6 * ConnBufferSize)
			answer := `{"jsonrpc":"2.0","id":1,"result":{"text":"` + big(tc.resultSize) + `"}}`
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s seen) {
				w.Header().Set("X-Long", longHeader)
				switch tc.framing {
				case "length":
					w.Header().Set("Content-Type", "application/json")
					w.Header().Set("Content-Length", fmt.Sprint(len(answer)))
					w.Write([]byte(answer))
				case "chunked":
					w.Header().Set("Content-Type", "application/json")
					half := len(answer) / 2
					w.Write([]byte(answer[:half]))
					w.(http.Flusher).Flush() // headers out without a length: chunked
					w.Write([]byte(answer[half:]))
				case "sse":
					w.Header().Set("Content-Type", "text/event-stream")
					sseWrite(w, "data: "+answer+"\n\n")
				}
			})
			c := dial(t, Dialer{URL: srv.URL, Header: http.Header{"Authorization": {"Bearer " + longHeader}}})
			frame := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + big(tc.argSize) + `"}}}`
			send(t, c, frame)
			if f := recv(t, c); f.Err != nil || !bytes.Equal(f.Data, []byte(answer)) {
				t.Fatalf("answer: err %v, %d bytes, want the %d bytes sent", f.Err, len(f.Data), len(answer))
			}
			reqs := srv.find(http.MethodPost)
			if len(reqs) != 1 {
				t.Fatalf("server saw %d POSTs, want 1", len(reqs))
			}
			if got := reqs[0]; string(got.Body) != frame || got.Header.Get("Authorization") != "Bearer "+longHeader {
				t.Fatalf("server got a %d-byte body (want %d) and a %d-byte Authorization (want %d)",
					len(got.Body), len(frame), len(got.Header.Get("Authorization")), len("Bearer "+longHeader))
			}
		})
	}
}
