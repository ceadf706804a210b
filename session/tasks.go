package session

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// This file holds the tasks utility of 2025-11-25 (experimental): the Task type, its strict
// decoding, and the plain methods tasks/get, tasks/result, tasks/list and tasks/cancel. The
// task-augmented tools/call built on them is in taskcall.go.

// TaskStatus is the state of a task.
type TaskStatus string

// The task statuses of 2025-11-25. A task starts working; completed, failed and cancelled are
// terminal.
const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed"
	TaskFailed        TaskStatus = "failed"
	TaskCancelled     TaskStatus = "cancelled"
)

// Terminal reports whether a task in status st can no longer change.
func (st TaskStatus) Terminal() bool {
	return st == TaskCompleted || st == TaskFailed || st == TaskCancelled
}

func (st TaskStatus) known() bool {
	switch st {
	case TaskWorking, TaskInputRequired, TaskCompleted, TaskFailed, TaskCancelled:
		return true
	}
	return false
}

// RelatedTaskMetaKey is the `_meta` key that ties a request, notification or result to a task.
const RelatedTaskMetaKey = "io.modelcontextprotocol/related-task"

// Task is the state of one task as the server reported it (tasks/get, tasks/list, tasks/cancel,
// the CreateTaskResult of a task-augmented request, notifications/tasks/status).
type Task struct {
	// TaskID is the server-generated id of the task.
	TaskID string `json:"taskId"`
	// Status is the task's current state.
	Status TaskStatus `json:"status"`
	// StatusMessage is the server's human-readable word on the state, if any.
	StatusMessage string `json:"statusMessage,omitempty"`
	// CreatedAt and LastUpdatedAt are the server's ISO 8601 timestamps; zero when the server's
	// string is not RFC 3339 (the string is still in Raw).
	CreatedAt     time.Time `json:"createdAt"`
	LastUpdatedAt time.Time `json:"lastUpdatedAt"`
	// TTL is how long the server keeps the task from its creation; nil means unlimited (null).
	TTL *time.Duration `json:"ttl"`
	// PollInterval is the server's suggested interval between tasks/get; zero when absent.
	PollInterval time.Duration `json:"pollInterval,omitempty"`
	// Raw is the task object as the server sent it.
	Raw json.RawMessage `json:"-"`
}

// wireTask is a Task on the wire, every member raw so that each can be checked.
type wireTask struct {
	TaskID        json.RawMessage `json:"taskId"`
	Status        json.RawMessage `json:"status"`
	StatusMessage json.RawMessage `json:"statusMessage"`
	CreatedAt     json.RawMessage `json:"createdAt"`
	LastUpdatedAt json.RawMessage `json:"lastUpdatedAt"`
	TTL           json.RawMessage `json:"ttl"`
	PollInterval  json.RawMessage `json:"pollInterval"`
}

// decodeTask decodes and checks one task object as the TypeScript SDK's TaskSchema does:
// taskId, createdAt and lastUpdatedAt strings, a known status, ttl a number or null,
// pollInterval (optional) a number, statusMessage (optional) a string.
func decodeTask(raw []byte) (*Task, error) {
	var w wireTask
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("the task is not an object: %w", err)
	}
	t := &Task{Raw: raw}
	var ok bool
	if t.TaskID, ok = unquote(w.TaskID); !ok || t.TaskID == "" {
		return nil, fmt.Errorf("taskId is %s, not a non-empty string", describe(w.TaskID))
	}
	st, ok := unquote(w.Status)
	if t.Status = TaskStatus(st); !ok || !t.Status.known() {
		return nil, fmt.Errorf("status is %s, not one of working, input_required, completed, failed, cancelled", describe(w.Status))
	}
	if w.StatusMessage != nil && string(w.StatusMessage) != "null" {
		if t.StatusMessage, ok = unquote(w.StatusMessage); !ok {
			return nil, fmt.Errorf("statusMessage is %s, not a string", describe(w.StatusMessage))
		}
	}
	for _, ts := range []struct {
		name string
		raw  []byte
		dst  *time.Time
	}{{"createdAt", w.CreatedAt, &t.CreatedAt}, {"lastUpdatedAt", w.LastUpdatedAt, &t.LastUpdatedAt}} {
		s, ok := unquote(ts.raw)
		if !ok {
			return nil, fmt.Errorf("%s is %s, not a string", ts.name, describe(ts.raw))
		}
		*ts.dst, _ = time.Parse(time.RFC3339Nano, s)
	}
	switch {
	case w.TTL == nil:
		return nil, fmt.Errorf("ttl is absent (a number of milliseconds, or null for unlimited)")
	case string(w.TTL) != "null":
		d, err := millis(w.TTL)
		if err != nil {
			return nil, fmt.Errorf("ttl is %s: %w", describe(w.TTL), err)
		}
		t.TTL = &d
	}
	if w.PollInterval != nil && string(w.PollInterval) != "null" {
		d, err := millis(w.PollInterval)
		if err != nil {
			return nil, fmt.Errorf("pollInterval is %s: %w", describe(w.PollInterval), err)
		}
		t.PollInterval = d
	}
	return t, nil
}

// millis decodes a JSON number of milliseconds, rejecting what is not a finite number >= 0.
func millis(raw []byte) (time.Duration, error) {
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, fmt.Errorf("not a number")
	}
	if f < 0 || math.IsNaN(f) {
		return 0, fmt.Errorf("negative")
	}
	if f > float64(math.MaxInt64/int64(time.Millisecond)) {
		return time.Duration(math.MaxInt64), nil
	}
	return time.Duration(f * float64(time.Millisecond)), nil
}

// declaresToolTasks reports whether server capabilities declare
// tasks.requests.tools.call.
func declaresToolTasks(caps json.RawMessage) bool {
	var c struct {
		Tasks *struct {
			Requests *struct {
				Tools *struct {
					Call json.RawMessage `json:"call"`
				} `json:"tools"`
			} `json:"requests"`
		} `json:"tasks"`
	}
	if json.Unmarshal(caps, &c) != nil || c.Tasks == nil || c.Tasks.Requests == nil || c.Tasks.Requests.Tools == nil {
		return false
	}
	call := c.Tasks.Requests.Tools.Call
	return call != nil && string(call) != "null"
}

// taskParams encodes {"taskId":<id>}.
func taskParams(taskID string) []byte {
	b := appendString([]byte(`{"taskId":`), taskID)
	return append(b, '}')
}

// taskRequest sends one of tasks/get and tasks/cancel and decodes the task it answers with.
// quiet drops a late answer once the request is given up (the polling of a task-augmented
// call: the caller cancelled the call, not this request).
func (s *Session) taskRequest(ctx context.Context, method, taskID string, timeout time.Duration, quiet bool) (*Task, *Error) {
	resp, e := s.do(ctx, &request{method: method, params: taskParams(taskID), plain: true, timeout: timeout, quiet: quiet})
	if e != nil {
		return nil, e
	}
	t, err := decodeTask(resp.Result)
	if err != nil {
		return nil, &Error{Category: ProtocolError, Method: method, ID: resp.ID, Elapsed: resp.Timing.Latency,
			Message: "the " + method + " result is not a task: " + err.Error(), Frame: excerpt(resp.Result)}
	}
	if t.TaskID != taskID {
		return nil, &Error{Category: ProtocolError, Method: method, ID: resp.ID, Elapsed: resp.Timing.Latency,
			Message: fmt.Sprintf("asked about task %q, the server answered about task %q", taskID, t.TaskID), Frame: excerpt(resp.Result)}
	}
	return t, nil
}

// GetTask sends tasks/get and returns the task's state (2025-11-25, experimental). A result
// that is not a valid task, or names another task, fails as ProtocolError.
func (s *Session) GetTask(ctx context.Context, taskID string) (*Task, error) {
	t, e := s.taskRequest(ctx, "tasks/get", taskID, 0, false)
	return t, asError(e)
}

// CancelTask sends tasks/cancel and returns the task's state after it (2025-11-25,
// experimental). A server answers -32602 for a task already terminal.
func (s *Session) CancelTask(ctx context.Context, taskID string) (*Task, error) {
	t, e := s.taskRequest(ctx, "tasks/cancel", taskID, 0, false)
	return t, asError(e)
}

// TaskResult sends tasks/result and returns the raw result of the task's underlying request
// (for tools/call a CallToolResult), or that request's JSON-RPC error (2025-11-25,
// experimental). The server holds the answer until the task is terminal, meanwhile sending
// the requests the task needs (elicitation, sampling), which the session answers as any other;
// so the hang detector does not apply, and the request timeout (or ctx) bounds the wait.
func (s *Session) TaskResult(ctx context.Context, taskID string) (*Response, error) {
	resp, e := s.do(ctx, &request{method: "tasks/result", params: taskParams(taskID), plain: true, noHang: true})
	return resp, asError(e)
}

// ListTasks returns every task the server lists (tasks/list, all pages; 2025-11-25,
// experimental). A listed task that is not valid fails the listing as ProtocolError.
func (s *Session) ListTasks(ctx context.Context) ([]Task, error) {
	var out []Task
	err := s.page(ctx, "tasks/list", "tasks", func(raw json.RawMessage) error {
		t, err := decodeTask(raw)
		if err != nil {
			return err
		}
		out = append(out, *t)
		return nil
	})
	return out, err
}

// watchTask registers a channel that a notifications/tasks/status for taskID wakes; the
// returned function forgets it.
func (s *Session) watchTask(taskID string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	s.mu.Lock()
	if s.sh.taskWake == nil {
		s.sh.taskWake = make(map[string]chan struct{})
	}
	s.sh.taskWake[taskID] = ch
	s.mu.Unlock()
	return ch, func() {
		s.mu.Lock()
		if s.sh.taskWake[taskID] == ch {
			delete(s.sh.taskWake, taskID)
		}
		s.mu.Unlock()
	}
}

// taskStatus wakes the task-augmented call polling the task a notifications/tasks/status
// names (the notification itself still reaches Options.OnNotification).
func (s *Session) taskStatus(params []byte) {
	var id []byte
	if eachMember(params, func(k, v []byte) {
		if keyIs(k, "taskId") {
			id = v
		}
	}) != nil {
		return
	}
	taskID, ok := unquote(id)
	if !ok {
		return
	}
	s.mu.Lock()
	ch := s.sh.taskWake[taskID]
	s.mu.Unlock()
	if ch != nil {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
