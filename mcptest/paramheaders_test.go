package mcptest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpspec/mcpspec/mcptest"
)

// TestParamHeaders checks the server's Mcp-Param-* validation for the route tool over
// Streamable HTTP in the stateless era: 400 and -32020 when a header is missing, unexpected or
// does not match the argument, as a Go SDK v1.8.0 server answers.
func TestParamHeaders(t *testing.T) {
	s := mcptest.NewServer(&mcptest.Options{Era: mcptest.EraStateless, ParamHeaders: true})
	t.Cleanup(s.Close)
	hc := httpClient(t)
	v := mcptest.StatelessVersion
	hdr := func(params map[string]string) map[string]string {
		h := map[string]string{mcptest.HeaderMethod: "tools/call", mcptest.HeaderName: "route", mcptest.HeaderProtocolVersion: v}
		for k, val := range params {
			h[mcptest.HeaderParamPrefix+k] = val
		}
		return h
	}
	all := map[string]any{"region": "eu", "priority": 7, "urgent": true, "target": map[string]any{"shard": "s-1"}, "text": "hi"}
	allHeaders := map[string]string{"Region": "eu", "Priority": "7", "Urgent": "true", "Shard": "s-1"}
	with := func(k, val string) map[string]string {
		m := map[string]string{}
		for k2, v2 := range allHeaders {
			m[k2] = v2
		}
		if val == "" {
			delete(m, k)
		} else {
			m[k] = val
		}
		return m
	}
	tests := []struct {
		name     string
		args     map[string]any
		params   map[string]string
		wantCode int // 0: success
	}{
		{"all headers", all, allHeaders, 0},
		{"region only", map[string]any{"region": "us"}, map[string]string{"Region": "us"}, 0},
		{"header name case-insensitive", map[string]any{"region": "us"}, map[string]string{"REGION": "us"}, 0},
		{"base64 region", map[string]any{"region": "Zürich"}, map[string]string{"Region": "=?base64?WsO8cmljaA==?="}, 0},
		{"base64 of plain text", map[string]any{"region": "us"}, map[string]string{"Region": "=?base64?dXM=?="}, 0},
		{"integer compared numerically", map[string]any{"region": "us", "priority": 7}, map[string]string{"Region": "us", "Priority": "7.0"}, 0},
		{"null argument, no header", map[string]any{"region": "us", "urgent": nil}, map[string]string{"Region": "us"}, 0},
		{"missing region", all, with("Region", ""), mcptest.CodeHeaderMismatch},
		{"missing nested shard", all, with("Shard", ""), mcptest.CodeHeaderMismatch},
		{"mismatched region", all, with("Region", "us"), mcptest.CodeHeaderMismatch},
		{"mismatched priority", all, with("Priority", "8"), mcptest.CodeHeaderMismatch},
		{"boolean spelled differently", all, with("Urgent", "True"), mcptest.CodeHeaderMismatch},
		{"invalid base64", all, with("Region", "=?base64?***?="), mcptest.CodeHeaderMismatch},
		{"header for an absent argument", map[string]any{"region": "us"}, map[string]string{"Region": "us", "Urgent": "true"}, mcptest.CodeHeaderMismatch},
		{"non-primitive argument", map[string]any{"region": "us", "target": map[string]any{"shard": 5.5}}, map[string]string{"Region": "us", "Shard": "5.5"}, mcptest.CodeHeaderMismatch},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, hc, "POST", s.URL, hdr(tt.params), rpc(i+1, "tools/call", statelessMeta(toolCall("route", tt.args), v)))
			m := r.msg(t)
			switch {
			case tt.wantCode == 0 && (r.status != http.StatusOK || m.Error != nil):
				t.Errorf("HTTP %d %s, want success", r.status, r.body)
			case tt.wantCode != 0 && (r.status != http.StatusBadRequest || m.Error == nil || m.Error.Code != tt.wantCode):
				t.Errorf("HTTP %d %s, want 400 with code %d", r.status, r.body, tt.wantCode)
			}
		})
	}

	// The other tools carry no annotation and need no Mcp-Param-* header.
	r := do(t, hc, "POST", s.URL, map[string]string{mcptest.HeaderMethod: "tools/call", mcptest.HeaderName: "echo", mcptest.HeaderProtocolVersion: v},
		rpc(100, "tools/call", statelessMeta(echoCall("plain"), v)))
	if r.status != http.StatusOK {
		t.Errorf("echo without Mcp-Param-*: HTTP %d %s", r.status, r.body)
	}
}

// TestParamHeadersLegacy: a legacy session's tools/call needs no Mcp-Param-* header.
func TestParamHeadersLegacy(t *testing.T) {
	s := mcptest.NewServer(&mcptest.Options{ParamHeaders: true})
	t.Cleanup(s.Close)
	hc := httpClient(t)
	init := do(t, hc, "POST", s.URL, nil, rpc(1, "initialize", initParams))
	sid := init.header.Get(mcptest.HeaderSessionID)
	if init.status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: HTTP %d %s", init.status, init.body)
	}
	h := map[string]string{mcptest.HeaderSessionID: sid, mcptest.HeaderProtocolVersion: mcptest.LatestLegacyVersion}
	do(t, hc, "POST", s.URL, h, rpc(nil, "notifications/initialized", nil))
	r := do(t, hc, "POST", s.URL, h, rpc(2, "tools/call", toolCall("route", map[string]any{"region": "us", "urgent": true})))
	if m := r.msg(t); r.status != http.StatusOK || m.Error != nil {
		t.Errorf("legacy route: HTTP %d %s", r.status, r.body)
	}
}

// TestParamHeadersGoSDKClient: the Go SDK client keeps route in its tool list (it drops tools
// whose x-mcp-header annotations break SEP-2243), sends its Mcp-Param-* headers, and the server
// accepts them, with values that need base64 too.
func TestParamHeadersGoSDKClient(t *testing.T) {
	s := mcptest.NewServer(&mcptest.Options{Era: mcptest.EraStateless, ParamHeaders: true})
	t.Cleanup(s.Close)
	ctx, cancel := context.WithTimeout(t.Context(), waitFor)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "interop", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: httpClient(t), MaxRetries: -1}, nil)
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
	if !slices.Contains(names, "route") {
		t.Fatalf("the SDK client dropped route from %v: its annotations are invalid", names)
	}
	for _, args := range []map[string]any{
		{"region": "eu", "priority": 7, "urgent": true, "target": map[string]any{"shard": "s-1"}, "text": "hi"},
		{"region": " Zürich ", "priority": -3, "urgent": false, "target": map[string]any{"shard": "=?base64?x?="}},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "route", Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("call route %v: %v %+v", args, err, res)
		}
		got, _ := json.Marshal(res.StructuredContent)
		var sc struct {
			Region string `json:"region"`
		}
		if err := json.Unmarshal(got, &sc); err != nil || sc.Region != args["region"] {
			t.Errorf("route structuredContent %s, want region %q", got, args["region"])
		}
	}
}
