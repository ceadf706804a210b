package inventory_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/analyze/inventory"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

func openTestServer(t *testing.T, opts *mcptest.Options, version string) (context.Context, *session.Session) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	srv := mcptest.NewServer(opts)
	t.Cleanup(srv.Close)
	d, _, err := spec.Parse(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(ctx, d, &session.Options{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return ctx, s
}

func TestCollectBothEras(t *testing.T) {
	for _, v := range []string{session.Version20260728, session.Version20250618} {
		t.Run(v, func(t *testing.T) {
			// Paging on: Collect must follow every cursor.
			ctx, s := openTestServer(t, &mcptest.Options{PageSize: 2}, v)
			inv, err := inventory.Collect(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			if inv.ProtocolVersion != v || inv.ServerInfo.Name != "mcptest" {
				t.Errorf("version %q server %+v", inv.ProtocolVersion, inv.ServerInfo)
			}
			var names []string
			for _, tl := range inv.Tools {
				names = append(names, tl.Name)
				if len(tl.Raw) == 0 {
					t.Errorf("tool %s lost its raw form", tl.Name)
				}
			}
			if len(names) < 6 || names[0] != "echo" || names[1] != "add" {
				t.Errorf("tools %v", names)
			}
			if len(inv.Prompts) == 0 || len(inv.Resources) == 0 || len(inv.Templates) == 0 {
				t.Errorf("prompts %d resources %d templates %d", len(inv.Prompts), len(inv.Resources), len(inv.Templates))
			}
			if inv.Tool("add") == nil || inv.Tool("nope") != nil {
				t.Error("Tool lookup")
			}
		})
	}
}

func TestJSONRoundTrip(t *testing.T) {
	ctx, s := openTestServer(t, nil, "")
	inv, err := inventory.Collect(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(inv)
	if err != nil {
		t.Fatal(err)
	}
	var back inventory.Inventory
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	data2, err := json.Marshal(&back)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(data), string(data2)); diff != "" {
		t.Errorf("round trip changed the JSON (-first +second):\n%s", diff)
	}
	if back.Tools[0].Name != inv.Tools[0].Name || string(back.Tools[0].Raw) != string(inv.Tools[0].Raw) {
		t.Errorf("tool 0: %s vs %s", back.Tools[0].Raw, inv.Tools[0].Raw)
	}
}

func TestUnmarshalToolsListResult(t *testing.T) {
	var inv inventory.Inventory
	err := json.Unmarshal([]byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":null}`), &inv)
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Tools) != 1 || inv.Tools[0].Name != "a" || string(inv.Tools[0].Raw) != `{"name":"a","inputSchema":{"type":"object"}}` {
		t.Errorf("got %+v", inv.Tools)
	}
	if err := json.Unmarshal([]byte(`{"tools":[{"name":1}]}`), &inv); err == nil {
		t.Error("a tool whose name is a number was accepted")
	}
}

func TestDeclares(t *testing.T) {
	cases := []struct {
		caps string
		cap  string
		want bool
	}{
		{``, "tools", true},
		{``, "prompts", false},
		{`null`, "tools", true},
		{`{"tools":{}}`, "tools", true},
		{`{"tools":{}}`, "prompts", false},
		{`{"prompts":null}`, "prompts", false},
		{`{"resources":{"subscribe":true}}`, "resources", true},
		{`[1]`, "tools", false},
	}
	for _, c := range cases {
		inv := inventory.Inventory{Capabilities: json.RawMessage(c.caps)}
		if got := inv.Declares(c.cap); got != c.want {
			t.Errorf("Declares(%q) over %s = %v, want %v", c.cap, c.caps, got, c.want)
		}
	}
}
