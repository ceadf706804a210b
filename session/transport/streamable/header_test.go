package streamable

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
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

// TestSharedPostHeaderFollowsChanges: POSTs that send the same values share one header, and a
// changed session id, version, method or tool name is never sent from a stale one.
func TestSharedPostHeaderFollowsChanges(t *testing.T) {
	var n atomic.Int32
	srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, s seen) {
		if n.Add(1) == 2 {
			w.Header().Set("Mcp-Session-Id", "s-2")
		}
		result(w, s.RPC.ID, `{}`)
	})
	c := dial(t, Dialer{URL: srv.URL, Header: http.Header{"Authorization": {"Bearer x"}}})
	call := func(id int, method, name string) {
		send(t, c, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{"name":%q}}`, id, method, name))
		recv(t, c)
	}
	c.SetProtocolVersion("2025-11-25")
	call(1, "tools/call", "echo")
	call(2, "tools/call", "echo") // its answer brings a session id
	call(3, "tools/call", "echo")
	call(4, "tools/call", "add")
	call(5, "prompts/get", "add")
	c.SetProtocolVersion("2026-07-28")
	call(6, "prompts/get", "add")
	call(7, "tools/call", "echo")

	type hdrs struct{ Session, Version, Method, Name, Auth string }
	var got []hdrs
	for _, r := range srv.find(http.MethodPost) {
		h := r.Header
		got = append(got, hdrs{h.Get("Mcp-Session-Id"), h.Get("MCP-Protocol-Version"), h.Get("Mcp-Method"), h.Get("Mcp-Name"), h.Get("Authorization")})
	}
	want := []hdrs{
		{"", "2025-11-25", "tools/call", "echo", "Bearer x"},
		{"", "2025-11-25", "tools/call", "echo", "Bearer x"},
		{"s-2", "2025-11-25", "tools/call", "echo", "Bearer x"},
		{"s-2", "2025-11-25", "tools/call", "add", "Bearer x"},
		{"s-2", "2025-11-25", "prompts/get", "add", "Bearer x"},
		{"s-2", "2026-07-28", "prompts/get", "add", "Bearer x"},
		{"s-2", "2026-07-28", "tools/call", "echo", "Bearer x"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("request headers (-want +got):\n%s", d)
	}
}
