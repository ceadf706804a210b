package mcptest_test

import (
	"strings"
	"testing"

	"github.com/mcpspec/mcpspec/mcptest"
)

// TestHostileHTML checks that --hostile-html serves its payload in every place a web UI shows:
// tool name, title, description, schema, the error of a call, a tool's text and a resource.
func TestHostileHTML(t *testing.T) {
	_, plain := startTCP(t, nil)
	plain.initialize()
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	plain.result("tools/list", map[string]any{}, &list)
	for _, tl := range list.Tools {
		if tl.Name == mcptest.HostileHTMLToolName || tl.Name == "html_echo" {
			t.Fatalf("tool %q listed without HostileHTML", tl.Name)
		}
	}

	_, c := startTCP(t, &mcptest.Options{HostileHTML: true})
	c.initialize()
	var raw map[string]any
	c.result("tools/list", map[string]any{}, &raw)
	tools := raw["tools"].([]any)
	var hostile map[string]any
	for _, tl := range tools {
		if m := tl.(map[string]any); m["name"] == mcptest.HostileHTMLToolName {
			hostile = m
		}
	}
	if hostile == nil {
		t.Fatalf("no tool named %q in %v", mcptest.HostileHTMLToolName, tools)
	}
	schema := hostile["inputSchema"].(map[string]any)
	mode := schema["properties"].(map[string]any)["mode"].(map[string]any)
	for what, v := range map[string]any{"title": hostile["title"], "schema title": schema["title"], "default": mode["default"], "enum[2]": mode["enum"].([]any)[2]} {
		if v != mcptest.HostileHTML {
			t.Errorf("%s = %v, want the payload", what, v)
		}
	}
	m := c.call("tools/call", toolCall(mcptest.HostileHTMLToolName, map[string]any{}))
	if m.Error == nil || !strings.Contains(m.Error.Message, mcptest.HostileHTML) {
		t.Errorf("call: error %+v, want one carrying the payload", m.Error)
	}
	var res toolResult
	c.result("tools/call", toolCall("html_echo", map[string]any{}), &res)
	if res.text() != mcptest.HostileHTML {
		t.Errorf("html_echo = %q, want the payload", res.text())
	}
	var read struct {
		Contents []struct {
			Text string `json:"text"`
		} `json:"contents"`
	}
	c.result("resources/read", map[string]any{"uri": "mcptest://static/hostile.html"}, &read)
	if len(read.Contents) != 1 || read.Contents[0].Text != mcptest.HostileHTML {
		t.Errorf("resources/read = %+v, want the payload", read)
	}
}
