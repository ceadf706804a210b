package streamable

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestSendWithHeader: the extra headers go with that one POST only, next to the derived ones.
func TestSendWithHeader(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, s seen) { result(w, s.RPC.ID, `{}`) })
	c := dial(t, Dialer{URL: srv.URL})
	c.SetProtocolVersion("2026-07-28")
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"route","arguments":{"region":"eu"}}}`
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.SendWithHeader(ctx, []byte(call), http.Header{"Mcp-Param-Region": {"eu"}}); err != nil {
		t.Fatalf("SendWithHeader: %v", err)
	}
	recv(t, c)
	send(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"route","arguments":{"region":"eu"}}}`)
	recv(t, c)

	type hdrs struct{ Method, Name, Version, Region string }
	var got []hdrs
	for _, r := range srv.find(http.MethodPost) {
		h := r.Header
		got = append(got, hdrs{h.Get("Mcp-Method"), h.Get("Mcp-Name"), h.Get("MCP-Protocol-Version"), h.Get("Mcp-Param-Region")})
	}
	want := []hdrs{
		{"tools/call", "route", "2026-07-28", "eu"},
		{"tools/call", "route", "2026-07-28", ""},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("request headers (-want +got):\n%s", d)
	}
}
