package mcptest_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpspec/mcpspec/mcptest"
)

func startTCP(t *testing.T, opts *mcptest.Options) (*mcptest.TCPServer, *lineClient) {
	t.Helper()
	s := mcptest.NewTCPServer(opts)
	t.Cleanup(s.Close)
	c := dialTCP(t, s)
	return s, c
}

func TestToolsResults(t *testing.T) {
	_, c := startTCP(t, nil)
	c.initialize()
	tests := []struct {
		name       string
		args       map[string]any
		wantText   string
		wantStruct string
		wantError  bool
	}{
		{"echo", map[string]any{"text": "héllo\nworld"}, "héllo\nworld", "", false},
		{"echo", map[string]any{"text": ""}, "", "", false},
		{"echo", map[string]any{}, `invalid arguments for tool "echo": missing required argument "text"`, "", true},
		{"echo", map[string]any{"text": 5}, `invalid arguments for tool "echo": argument "text" must be a string`, "", true},
		{"add", map[string]any{"a": 2, "b": 3.5}, "5.5", `{"sum":5.5}`, false},
		{"add", map[string]any{"a": -1, "b": 1}, "0", `{"sum":0}`, false},
		{"add", map[string]any{"a": "2", "b": 3}, `invalid arguments for tool "add": argument "a" must be a number`, "", true},
		{"slow", map[string]any{"milliseconds": 1}, "slept 1ms", "", false},
		{"slow", map[string]any{"milliseconds": 1.5}, `invalid arguments for tool "slow": argument "milliseconds" must be an integer`, "", true},
		{"slow", map[string]any{"milliseconds": -3}, `invalid arguments for tool "slow": milliseconds must be >= 0, got -3`, "", true},
		{"error", map[string]any{"as_tool": true}, "synthetic error", "", true},
		{"error", map[string]any{"as_tool": true, "message": "boom"}, "boom", "", true},
		{"error", map[string]any{"category": "nope"}, `invalid arguments for tool "error": category must be one of protocol, tool, timeout, auth; got "nope"`, "", true},
		{"flaky", map[string]any{"fail_rate": 0, "seed": "alpha", "call_id": 2}, "flaky success (roll=0.0403 >= rate=0.0000)", "", false},
	}
	for _, tt := range tests {
		var res toolResult
		c.result("tools/call", toolCall(tt.name, tt.args), &res)
		if res.text() != tt.wantText || res.IsError != tt.wantError || string(res.StructuredContent) != tt.wantStruct {
			t.Errorf("%s(%v) = %q isError=%v structured=%s; want %q isError=%v structured=%s",
				tt.name, tt.args, res.text(), res.IsError, res.StructuredContent, tt.wantText, tt.wantError, tt.wantStruct)
		}
		if res.ResultType != "" {
			t.Errorf("%s: legacy result carries resultType %q", tt.name, res.ResultType)
		}
	}
}

func TestToolsProtocolErrors(t *testing.T) {
	_, c := startTCP(t, nil)
	c.initialize()
	tests := []struct {
		name     string
		args     map[string]any
		wantCode int
		wantMsg  string
	}{
		{"nosuchtool", nil, mcptest.CodeInvalidParams, `unknown tool "nosuchtool"`},
		{"confirm", nil, mcptest.CodeInvalidParams, `unknown tool "confirm"`}, // stateless era only
		{"error", map[string]any{}, -32000, "synthetic error"},
		{"error", map[string]any{"category": "protocol", "message": "p"}, -32603, "p"},
		{"error", map[string]any{"category": "tool"}, -32000, "synthetic error"},
		{"error", map[string]any{"category": "timeout"}, -32001, "synthetic error"},
		{"error", map[string]any{"category": "auth"}, -32003, "synthetic error"},
		{"flaky", map[string]any{"fail_rate": 0.5, "seed": "alpha", "call_id": 2}, -32000, "flaky failure (roll=0.0403 < rate=0.5000)"},
		{"flaky", map[string]any{"fail_rate": 7, "seed": "", "call_id": 3}, -32000, "flaky failure (roll=0.8257 < rate=1.0000)"},
	}
	for _, tt := range tests {
		m := c.call("tools/call", toolCall(tt.name, tt.args))
		if m.Error == nil {
			t.Errorf("%s(%v): result %s, want error %d", tt.name, tt.args, m.Result, tt.wantCode)
			continue
		}
		if m.Error.Code != tt.wantCode || m.Error.Message != tt.wantMsg {
			t.Errorf("%s(%v): error %d %q, want %d %q", tt.name, tt.args, m.Error.Code, m.Error.Message, tt.wantCode, tt.wantMsg)
		}
	}
	if m := c.call("tools/call", toolCall("error", map[string]any{"category": "auth"})); string(m.Error.Data) != `{"category":"auth"}` {
		t.Errorf("error data = %s", m.Error.Data)
	}
}

func TestToolsListPaging(t *testing.T) {
	_, c := startTCP(t, &mcptest.Options{PageSize: 2})
	c.initialize()
	var names []string
	cursor := ""
	for page := 0; page < 10; page++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var res struct {
			Tools []struct {
				Name         string          `json:"name"`
				InputSchema  json.RawMessage `json:"inputSchema"`
				OutputSchema json.RawMessage `json:"outputSchema"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		c.result("tools/list", params, &res)
		if len(res.Tools) > 2 {
			t.Fatalf("page of %d tools, want <= 2", len(res.Tools))
		}
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
			if tool.Name == "add" && len(tool.OutputSchema) == 0 {
				t.Error("add has no outputSchema")
			}
		}
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	if diff := cmp.Diff([]string{"echo", "add", "slow", "error", "flaky", "ask", "roots"}, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	m := c.call("tools/list", map[string]any{"cursor": "garbage"})
	if m.Error == nil || m.Error.Code != mcptest.CodeInvalidParams {
		t.Errorf("bad cursor: %s", m.raw)
	}
}

func TestSlowProgressAndCancel(t *testing.T) {
	s, c := startTCP(t, nil)
	c.initialize()

	id := c.request("tools/call", map[string]any{
		"name": "slow", "arguments": map[string]any{"milliseconds": 20},
		"_meta": map[string]any{"progressToken": "tok"},
	})
	var progress []float64
	for {
		m := c.recv()
		if m.Method == "notifications/progress" {
			var p struct {
				Token    string  `json:"progressToken"`
				Progress float64 `json:"progress"`
				Total    float64 `json:"total"`
			}
			_ = json.Unmarshal(m.Params, &p)
			if p.Token != "tok" || p.Total != 10 {
				t.Errorf("progress %s", m.Params)
			}
			progress = append(progress, p.Progress)
			continue
		}
		if string(m.ID) != "2" || !strings.Contains(string(m.Result), "slept 20ms") {
			t.Fatalf("response %s, want id %d slept 20ms", m.raw, id)
		}
		break
	}
	if want := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}; !slices.Equal(progress, want) {
		t.Errorf("progress %v, want %v", progress, want)
	}

	// A cancelled call is never answered and leaves no call in flight.
	slowID := c.request("tools/call", toolCall("slow", map[string]any{"milliseconds": 60000}))
	waitStats(t, s.Stats, func(st mcptest.Stats) bool { return st.InFlight == 1 })
	c.send(nil, "notifications/cancelled", map[string]any{"requestId": slowID, "reason": "test"})
	waitStats(t, s.Stats, func(st mcptest.Stats) bool { return st.InFlight == 0 })
	if m := c.call("ping", nil); string(m.Result) != "{}" {
		t.Errorf("ping after cancel: %s", m.raw)
	}
}

func TestResourcesPromptsCompletion(t *testing.T) {
	_, c := startTCP(t, nil)
	c.initialize()

	var list struct {
		Resources []struct{ URI, MimeType string } `json:"resources"`
	}
	c.result("resources/list", nil, &list)
	if len(list.Resources) != 3 {
		t.Fatalf("resources: %+v", list.Resources)
	}
	var read struct {
		Contents []struct{ URI, MimeType, Text, Blob string } `json:"contents"`
	}
	c.result("resources/read", map[string]any{"uri": "mcptest://static/hello.txt"}, &read)
	if read.Contents[0].Text != "Hello from mcptest.\n" || read.Contents[0].MimeType != "text/plain" {
		t.Errorf("hello.txt: %+v", read.Contents)
	}
	read.Contents = nil
	c.result("resources/read", map[string]any{"uri": "mcptest://static/pixel.png"}, &read)
	if !strings.HasPrefix(read.Contents[0].Blob, "iVBORw0KGgo") || read.Contents[0].Text != "" {
		t.Errorf("pixel.png: %+v", read.Contents)
	}
	read.Contents = nil
	c.result("resources/read", map[string]any{"uri": "mcptest://items/42"}, &read)
	if read.Contents[0].Text != `{"id":"42","name":"item 42"}` {
		t.Errorf("item 42: %+v", read.Contents)
	}
	m := c.call("resources/read", map[string]any{"uri": "mcptest://nope"})
	if m.Error == nil || m.Error.Code != mcptest.CodeResourceNotFound {
		t.Errorf("missing resource: %s", m.raw)
	}
	var templates struct {
		ResourceTemplates []struct{ URITemplate string } `json:"resourceTemplates"`
	}
	c.result("resources/templates/list", nil, &templates)
	if len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != mcptest.ItemTemplate {
		t.Errorf("templates: %+v", templates)
	}

	var prompt struct {
		Messages []struct {
			Role    string
			Content struct{ Type, Text string }
		}
	}
	c.result("prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Ada"}}, &prompt)
	if len(prompt.Messages) != 1 || prompt.Messages[0].Content.Text != "Please greet Ada in a warm way." {
		t.Errorf("greet: %+v", prompt)
	}
	if m := c.call("prompts/get", map[string]any{"name": "greet"}); m.Error == nil || m.Error.Code != mcptest.CodeInvalidParams {
		t.Errorf("greet without name: %s", m.raw)
	}
	var comp struct {
		Completion struct {
			Values []string
			Total  int
		}
	}
	c.result("completion/complete", map[string]any{
		"ref": map[string]any{"type": "ref/prompt", "name": "greet"}, "argument": map[string]any{"name": "name", "value": "a"},
	}, &comp)
	if diff := cmp.Diff([]string{"Ada", "Alan"}, comp.Completion.Values); diff != "" || comp.Completion.Total != 2 {
		t.Errorf("completion (-want +got):\n%s", diff)
	}

	// logging/setLevel emits a notifications/message; subscribe emits resources/updated.
	c.request("logging/setLevel", map[string]any{"level": "debug"})
	if n := c.recv(); n.Method != "notifications/message" || !strings.Contains(string(n.Params), `"level":"debug"`) {
		t.Errorf("after setLevel: %s", n.raw)
	}
	if r := c.recv(); string(r.Result) != "{}" {
		t.Errorf("setLevel result: %s", r.raw)
	}
	c.request("resources/subscribe", map[string]any{"uri": "mcptest://static/hello.txt"})
	if n := c.recv(); n.Method != "notifications/resources/updated" {
		t.Errorf("after subscribe: %s", n.raw)
	}
	c.recv()
}

func TestInvalidFrames(t *testing.T) {
	_, c := startTCP(t, nil)
	for _, tt := range []struct {
		line string
		code int
	}{
		{`{not json`, mcptest.CodeParseError},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, mcptest.CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, mcptest.CodeInvalidRequest},
		{`{"jsonrpc":"1.0","id":1,"method":"ping"}`, mcptest.CodeInvalidRequest},
	} {
		c.sendRaw(tt.line)
		if m := c.recv(); m.Error == nil || m.Error.Code != tt.code {
			t.Errorf("%s: got %s, want code %d", tt.line, m.raw, tt.code)
		}
	}
	if m := c.call("nosuch/method", nil); m.Error == nil || m.Error.Code != mcptest.CodeInvalidParams {
		// in the default (both) era an uninitialized request without _meta is -32602
		t.Errorf("uninitialized: %s", m.raw)
	}
	c.initialize()
	if m := c.call("nosuch/method", nil); m.Error == nil || m.Error.Code != mcptest.CodeMethodNotFound {
		t.Errorf("unknown method: %s", m.raw)
	}
}
