package mcptest_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpspec/mcpspec/internal/poll"
	"github.com/mcpspec/mcpspec/mcptest"
)

// initializeAt performs the legacy handshake offering version.
func initializeAt(c *lineClient, version string) map[string]json.RawMessage {
	c.t.Helper()
	var res struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	c.result("initialize", map[string]any{
		"protocolVersion": version, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "test", "version": "0"},
	}, &res)
	c.send(nil, "notifications/initialized", nil)
	return res.Capabilities
}

// TestTasksAdvertised checks that tasks are opt-in and only in a 2025-11-25 session: the tool
// list of every other combination is the one the rest of the suite knows.
func TestTasksAdvertised(t *testing.T) {
	plain := []string{"echo", "add", "slow", "error", "flaky", "ask", "roots"}
	cases := []struct {
		tasks     bool
		version   string
		wantCap   bool
		wantTools []string
	}{
		{false, "2025-11-25", false, plain},
		{true, "2025-06-18", false, plain},
		{true, "2025-11-25", true, append(plain, "job")},
	}
	for _, tc := range cases {
		_, c := startTCP(t, &mcptest.Options{Tasks: tc.tasks})
		caps := initializeAt(c, tc.version)
		if _, ok := caps["tasks"]; ok != tc.wantCap {
			t.Errorf("tasks=%v %s: tasks capability %v, want %v", tc.tasks, tc.version, ok, tc.wantCap)
		}
		var list struct {
			Tools []struct {
				Name      string `json:"name"`
				Execution *struct {
					TaskSupport string `json:"taskSupport"`
				} `json:"execution"`
			} `json:"tools"`
		}
		c.result("tools/list", nil, &list)
		var names []string
		support := map[string]string{}
		for _, tl := range list.Tools {
			names = append(names, tl.Name)
			if tl.Execution != nil {
				support[tl.Name] = tl.Execution.TaskSupport
			}
		}
		if diff := cmp.Diff(tc.wantTools, names); diff != "" {
			t.Errorf("tasks=%v %s: tools (-want +got):\n%s", tc.tasks, tc.version, diff)
		}
		if tc.wantCap && (support["job"] != "required" || support["slow"] != "optional") {
			t.Errorf("task support %v", support)
		}
		if !tc.wantCap && len(support) != 0 {
			t.Errorf("tasks=%v %s: execution members %v", tc.tasks, tc.version, support)
		}
	}
}

type wireTask struct {
	TaskID        string  `json:"taskId"`
	Status        string  `json:"status"`
	StatusMessage string  `json:"statusMessage"`
	TTL           float64 `json:"ttl"`
	PollInterval  float64 `json:"pollInterval"`
	CreatedAt     string  `json:"createdAt"`
}

// createTask calls tool as a task and returns the created task.
func createTask(c *lineClient, tool string, args map[string]any, task map[string]any) wireTask {
	c.t.Helper()
	p := toolCall(tool, args)
	p["task"] = task
	var res struct {
		Task wireTask `json:"task"`
	}
	c.result("tools/call", p, &res)
	if res.Task.TaskID == "" || res.Task.Status != "working" {
		c.t.Fatalf("CreateTaskResult task %+v", res.Task)
	}
	return res.Task
}

// TestTasksStore checks the task methods' errors, the ttl and the cap on kept tasks.
func TestTasksStore(t *testing.T) {
	_, c := startTCP(t, &mcptest.Options{Tasks: true})
	c.initialize()

	if m := c.call("tools/call", toolCall("job", nil)); m.Error == nil || m.Error.Code != mcptest.CodeMethodNotFound {
		t.Errorf("job without task: %s, want -32601", m.raw)
	}
	p := toolCall("echo", map[string]any{"text": "x"})
	p["task"] = map[string]any{}
	if m := c.call("tools/call", p); m.Error == nil || m.Error.Code != mcptest.CodeMethodNotFound {
		t.Errorf("echo as a task: %s, want -32601", m.raw)
	}
	if m := c.call("tasks/get", map[string]any{"taskId": "nope"}); m.Error == nil || m.Error.Code != mcptest.CodeInvalidParams {
		t.Errorf("tasks/get unknown: %s, want -32602", m.raw)
	}

	// ttl: asked for 1ms, the task is forgotten soon after.
	short := createTask(c, "job", map[string]any{"milliseconds": 60000}, map[string]any{"ttl": 1})
	if short.TTL != 1 || short.PollInterval != 50 || short.CreatedAt == "" {
		t.Errorf("created %+v, want ttl 1 and pollInterval 50", short)
	}
	var m msg
	if !poll.Within(5*time.Second, func() bool {
		m = c.call("tasks/get", map[string]any{"taskId": short.TaskID})
		return m.Error != nil && m.Error.Code == mcptest.CodeInvalidParams
	}) {
		t.Fatalf("task with ttl 1ms still there after 5s: %s", m.raw)
	}

	// Cap: MaxTasks running tasks fill the store; one more is refused until one ends.
	var first wireTask
	for i := range mcptest.MaxTasks {
		tk := createTask(c, "job", map[string]any{"milliseconds": 60000}, map[string]any{})
		if i == 0 {
			first = tk
		}
	}
	p = toolCall("job", map[string]any{"milliseconds": 60000})
	p["task"] = map[string]any{}
	if m := c.call("tools/call", p); m.Error == nil || m.Error.Code != mcptest.CodeInternalError {
		t.Fatalf("task %d: %s, want -32603", mcptest.MaxTasks+1, m.raw)
	}
	var cancelled wireTask
	c.result("tasks/cancel", map[string]any{"taskId": first.TaskID}, &cancelled)
	if cancelled.Status != "cancelled" || cancelled.StatusMessage == "" {
		t.Errorf("tasks/cancel: %+v", cancelled)
	}
	if m := c.call("tasks/cancel", map[string]any{"taskId": first.TaskID}); m.Error == nil || m.Error.Code != mcptest.CodeInvalidParams {
		t.Errorf("second tasks/cancel: %s, want -32602", m.raw)
	}
	createTask(c, "job", map[string]any{"milliseconds": 60000}, map[string]any{})
	var list struct {
		Tasks []wireTask `json:"tasks"`
	}
	c.result("tasks/list", nil, &list)
	if len(list.Tasks) != mcptest.MaxTasks {
		t.Errorf("tasks/list has %d tasks, want %d (the cancelled one dropped)", len(list.Tasks), mcptest.MaxTasks)
	}
	for _, tk := range list.Tasks {
		if tk.TaskID == first.TaskID {
			t.Errorf("the cancelled task was kept past the cap")
		}
	}
}
