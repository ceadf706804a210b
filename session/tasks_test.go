package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/streamable"
	"github.com/mcpspec/mcpspec/session/transport/tcp"
)

// sentLog records the requests a session sends, by method, with their send times.
type sentLog struct {
	mu   sync.Mutex // guards msgs and at
	msgs []msg
	at   []time.Time
	// seen, when set, is signalled (without blocking) on every request sent.
	seen chan string
}

func (l *sentLog) hook(dir Direction, f transport.Frame) {
	if dir != Sent {
		return
	}
	var m msg
	if json.Unmarshal(f.Data, &m) != nil || m.Method == "" {
		return
	}
	m.raw = append([]byte(nil), f.Data...)
	l.mu.Lock()
	l.msgs = append(l.msgs, m)
	l.at = append(l.at, f.At)
	l.mu.Unlock()
	if l.seen != nil {
		select {
		case l.seen <- m.Method:
		default:
		}
	}
}

// take returns and forgets the requests sent so far with method ("" for all), and their times.
func (l *sentLog) take(method string) ([]msg, []time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []msg
	var at []time.Time
	for i, m := range l.msgs {
		if method == "" || m.Method == method {
			out = append(out, m)
			at = append(at, l.at[i])
		}
	}
	l.msgs, l.at = nil, nil
	return out, at
}

// taskServers starts mcptest with tasks on, legacy era, over TCP and Streamable HTTP.
func taskServers(t *testing.T) map[string]transport.Dialer {
	opts := &mcptest.Options{Era: mcptest.EraLegacy, Tasks: true}
	ts := mcptest.NewTCPServer(opts)
	t.Cleanup(ts.Close)
	hs := mcptest.NewServer(opts)
	t.Cleanup(hs.Close)
	return map[string]transport.Dialer{
		"tcp":        tcp.Dialer{Addr: ts.Addr},
		"streamable": streamable.Dialer{URL: hs.URL},
	}
}

func firstText(t *testing.T, r *ToolResult) string {
	t.Helper()
	if len(r.Content) == 0 {
		t.Fatalf("result without content: %s", r.Raw)
	}
	var c struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(r.Content[0], &c); err != nil {
		t.Fatalf("content %s: %v", r.Content[0], err)
	}
	return c.Text
}

// TestCallToolTaskMCPTest runs task-augmented calls against the reference server over a stream
// transport and over Streamable HTTP.
func TestCallToolTaskMCPTest(t *testing.T) {
	for name, d := range taskServers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			log := &sentLog{}
			var notes struct {
				sync.Mutex
				status []string
			}
			s := open(t, d, &Options{
				OnFrame:          log.hook,
				ElicitationReply: json.RawMessage(`{"action":"accept","content":{"answer":"forty-two"}}`),
				OnNotification: func(n Notification) {
					if n.Method == "notifications/tasks/status" {
						var p struct {
							Status string `json:"status"`
						}
						_ = json.Unmarshal(n.Params, &p)
						notes.Lock()
						notes.status = append(notes.status, p.Status)
						notes.Unlock()
					}
				},
			})
			if s.ProtocolVersion() != Version20251125 {
				t.Fatalf("version %s, want %s", s.ProtocolVersion(), Version20251125)
			}
			if !declaresToolTasks(s.ServerCapabilities()) {
				t.Fatalf("capabilities without tasks.requests.tools.call: %s", s.ServerCapabilities())
			}

			// Not listed yet: the session lists the tools once to learn that job is a task.
			res, err := s.CallTool(ctx, "job", map[string]any{"milliseconds": 1}, nil)
			if err != nil || firstText(t, res) != "job done after 1ms" {
				t.Fatalf("job before tools/list: %v", err)
			}
			if lists, _ := log.take("tools/list"); len(lists) != 1 {
				t.Errorf("%d tools/list before the first call, want 1", len(lists))
			}
			if _, err := s.CallTool(ctx, "echo", map[string]any{"text": "x"}, nil); err != nil {
				t.Fatal(err)
			}
			if lists, _ := log.take("tools/list"); len(lists) != 0 {
				t.Errorf("%d more tools/list, want none", len(lists))
			}
			tools, err := s.ListTools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			support := map[string]string{}
			for _, tl := range tools {
				if tl.Execution != nil {
					support[tl.Name] = tl.Execution.TaskSupport
				}
			}
			if support["job"] != TaskSupportRequired || support["slow"] != TaskSupportOptional || len(support) != 2 {
				t.Fatalf("task support %v, want job required and slow optional", support)
			}
			log.take("")

			t.Run("required tool is called as a task", func(t *testing.T) {
				start := time.Now()
				res, err := s.CallTool(ctx, "job", map[string]any{"milliseconds": 150}, nil)
				if err != nil {
					t.Fatalf("CallTool(job): %v", err)
				}
				if got := firstText(t, res); got != "job done after 150ms" {
					t.Errorf("text %q", got)
				}
				if res.Timing.Latency < 150*time.Millisecond || res.Timing.Latency > time.Since(start) || !res.Timing.Sent.Before(res.Timing.Received) {
					t.Errorf("timing %+v does not span the flow (>= 150ms, <= %v)", res.Timing, time.Since(start))
				}
				calls, _ := log.take("")
				methods := map[string]int{}
				for _, m := range calls {
					methods[m.Method]++
				}
				if methods["tools/call"] != 1 || methods["tasks/get"] < 1 || methods["tasks/result"] != 1 || methods["tasks/cancel"] != 0 {
					t.Errorf("requests sent %v", methods)
				}
				if !strings.Contains(string(calls[0].Params), `"task":{}`) {
					t.Errorf("tools/call params %s lack task", calls[0].Params)
				}
			})

			t.Run("optional tool with CallOptions.Task", func(t *testing.T) {
				res, err := s.CallTool(ctx, "slow", map[string]any{"milliseconds": 30}, &CallOptions{Task: &TaskOptions{TTL: 30 * time.Second}})
				if err != nil || firstText(t, res) != "slept 30ms" {
					t.Fatalf("CallTool(slow) as task: %v %s", err, res.Raw)
				}
				calls, _ := log.take("tools/call")
				if len(calls) != 1 || !strings.Contains(string(calls[0].Params), `"task":{"ttl":30000}`) {
					t.Errorf("tools/call %s, want task.ttl 30000", calls)
				}
				// Without it, optional means a plain call.
				if _, err := s.CallTool(ctx, "slow", map[string]any{"milliseconds": 1}, nil); err != nil {
					t.Fatal(err)
				}
				if got, _ := log.take("tasks/get"); len(got) != 0 {
					t.Errorf("a plain call of an optional tool polled %d times", len(got))
				}
			})

			t.Run("failed task", func(t *testing.T) {
				_, err := s.CallTool(ctx, "job", map[string]any{"milliseconds": 10, "fail": true}, nil)
				var e *Error
				if !errors.As(err, &e) || e.Category != ServerError || e.Code != -32000 || !strings.Contains(e.Message, "job failed on purpose") || e.Method != "tools/call" {
					t.Fatalf("failed job: %v", err)
				}
				// A failed tool call whose result is isError returns that result, as a plain call would.
				res, err := s.CallTool(ctx, "job", map[string]any{"milliseconds": 10, "fail": true, "as_tool": true}, nil)
				if err != nil || !res.IsError || firstText(t, res) != "job failed on purpose" {
					t.Fatalf("failed job as tool error: %v %+v", err, res)
				}
			})

			t.Run("input_required", func(t *testing.T) {
				res, err := s.CallTool(ctx, "job", map[string]any{"milliseconds": 100, "ask": true, "poll_ms": 10}, nil)
				if err != nil {
					t.Fatalf("CallTool(job ask): %v", err)
				}
				if got := firstText(t, res); !strings.Contains(got, "forty-two") {
					t.Errorf("text %q lacks the client's answer", got)
				}
			})

			t.Run("pollInterval honoured", func(t *testing.T) {
				log.take("")
				if _, err := s.CallTool(ctx, "job", map[string]any{"milliseconds": 400, "poll_ms": 100}, nil); err != nil {
					t.Fatal(err)
				}
				gets, at := log.take("tasks/get")
				if len(gets) < 2 || len(gets) > 6 {
					t.Errorf("%d tasks/get for a 400ms job polled every 100ms", len(gets))
				}
				// The last tasks/get may come early: the server's notifications/tasks/status for
				// the completed task wakes the poller (by design). Every earlier one waits.
				for i := 1; i < len(at)-1; i++ {
					if gap := at[i].Sub(at[i-1]); gap < 95*time.Millisecond {
						t.Errorf("tasks/get %d came %v after the previous one, before the 100ms pollInterval", i, gap)
					}
				}
			})

			t.Run("cancelled by ctx", func(t *testing.T) {
				log.take("")
				seen := make(chan string, 16)
				log.mu.Lock()
				log.seen = seen
				log.mu.Unlock()
				defer func() { log.mu.Lock(); log.seen = nil; log.mu.Unlock() }()
				cctx, ccancel := context.WithCancel(ctx)
				go func() {
					for m := range seen {
						if m == "tasks/get" {
							ccancel()
							return
						}
					}
				}()
				_, err := s.CallTool(cctx, "job", map[string]any{"milliseconds": 60000, "poll_ms": 10}, nil)
				ccancel()
				var e *Error
				if !errors.As(err, &e) || e.Category != Cancelled {
					t.Fatalf("cancelled job: %v, want Cancelled", err)
				}
				if got, _ := log.take("tasks/cancel"); len(got) != 1 {
					t.Fatalf("%d tasks/cancel sent, want 1", len(got))
				}
				assertTaskStatus(t, ctx, s, e, TaskCancelled)
			})

			t.Run("timeout covers the flow", func(t *testing.T) {
				start := time.Now()
				_, err := s.CallTool(ctx, "job", map[string]any{"milliseconds": 60000, "poll_ms": 20}, &CallOptions{Timeout: 300 * time.Millisecond})
				var e *Error
				if !errors.As(err, &e) || e.Category != Timeout {
					t.Fatalf("never-ending job: %v, want Timeout", err)
				}
				if el := time.Since(start); el > 300*time.Millisecond+2*taskCancelWait {
					t.Errorf("Timeout after %v, past the 300ms deadline and the bounded tasks/cancel", el)
				}
				assertTaskStatus(t, ctx, s, e, TaskCancelled)
			})

			t.Run("plain methods", func(t *testing.T) {
				tasks, err := s.ListTasks(ctx)
				if err != nil || len(tasks) < 6 {
					t.Fatalf("ListTasks: %d tasks, %v", len(tasks), err)
				}
				done := tasks[0]
				got, err := s.GetTask(ctx, done.TaskID)
				if err != nil || got.Status != TaskCompleted || got.TTL == nil || got.PollInterval <= 0 || got.CreatedAt.IsZero() {
					t.Fatalf("GetTask(%s): %+v %v", done.TaskID, got, err)
				}
				resp, err := s.TaskResult(ctx, done.TaskID)
				if err != nil || !strings.Contains(string(resp.Result), "job done") || !strings.Contains(string(resp.Result), RelatedTaskMetaKey) {
					t.Fatalf("TaskResult: %v %s", err, resp.Result)
				}
				if _, err := s.CancelTask(ctx, done.TaskID); err == nil {
					t.Errorf("CancelTask of a completed task succeeded")
				}
				var e *Error
				if _, err := s.GetTask(ctx, "no-such-task"); !errors.As(err, &e) || e.Code != -32602 {
					t.Errorf("GetTask(unknown): %v, want -32602", err)
				}
			})

			if name == "tcp" {
				// Status notifications reach OnNotification (over Streamable HTTP the server has
				// no stream for them once the CreateTaskResult is answered).
				notes.Lock()
				n := len(notes.status)
				notes.Unlock()
				if n == 0 {
					t.Errorf("no notifications/tasks/status reached OnNotification")
				}
			}
			if fs := s.Findings(); len(fs) != 0 {
				t.Errorf("findings %+v", fs)
			}
		})
	}
}

// assertTaskStatus checks that the server holds the task a call gave up on (named in the
// failure's hint) in status want.
func assertTaskStatus(t *testing.T, ctx context.Context, s *Session, e *Error, want TaskStatus) {
	t.Helper()
	tasks, err := s.ListTasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		if strings.Contains(e.Hint, task.TaskID) {
			if task.Status != want {
				t.Errorf("task %s is %s at the server, want %s", task.TaskID, task.Status, want)
			}
			return
		}
	}
	t.Errorf("the failure %v names no task the server lists", e)
}

// taskFake answers like a legacy server that declares task-augmented tools/call, with the
// given task object for tools/call and tasks/get.
func taskFake(t *testing.T, created, polled string) (*fake, transport.Dialer) {
	return newFake(t, func(f *fake, m msg) {
		switch m.Method {
		case "initialize":
			f.result(m, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"tasks":{"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"liar","version":"1"}}`)
		case "tools/list":
			f.result(m, `{"tools":[{"name":"t","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}]}`)
		case "tools/call":
			f.result(m, created)
		case "tasks/get":
			f.result(m, polled)
		case "tasks/cancel":
			f.errorReply(m, -32602, "no")
		default:
			f.defaults(m)
		}
	})
}

// TestCallToolTaskLyingServer checks what the session makes of a server that breaks the tasks
// utility, and of one that never finishes a task.
func TestCallToolTaskLyingServer(t *testing.T) {
	const stamp = `"createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z","ttl":60000,"pollInterval":10`
	task := func(id, status string) string {
		return fmt.Sprintf(`{"taskId":%q,"status":%q,%s}`, id, status, stamp)
	}
	cases := []struct {
		name            string
		created, polled string
		want            Category
		method          string
		cancelled       bool
	}{
		{"no taskId", `{"task":{"status":"working",` + stamp + `}}`, "", ProtocolError, "tools/call", false},
		{"unknown status", `{"task":` + task("a", "running") + `}`, "", ProtocolError, "tools/call", false},
		{"no ttl", `{"task":{"taskId":"a","status":"working","createdAt":"x","lastUpdatedAt":"x"}}`, "", ProtocolError, "tools/call", false},
		{"task not an object", `{"task":"a"}`, "", ProtocolError, "tools/call", false},
		{"tasks/get unknown status", `{"task":` + task("a", "working") + `}`, task("a", "bogus"), ProtocolError, "tasks/get", false},
		{"tasks/get another task", `{"task":` + task("a", "working") + `}`, task("b", "completed"), ProtocolError, "tasks/get", false},
		{"cancelled by the server", `{"task":` + task("a", "working") + `}`, task("a", "cancelled"), ServerError, "tools/call", false},
		{"never completes", `{"task":` + task("a", "working") + `}`, task("a", "working"), Timeout, "tools/call", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, d := taskFake(t, c.created, c.polled)
			s := open(t, d, &Options{RequestTimeout: 300 * time.Millisecond})
			if _, err := s.ListTools(context.Background()); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err := s.CallTool(context.Background(), "t", nil, nil)
			var e *Error
			if !errors.As(err, &e) || e.Category != c.want || e.Method != c.method {
				t.Fatalf("CallTool: %v, want %s on %s", err, c.want, c.method)
			}
			if el := time.Since(start); el > 300*time.Millisecond+2*taskCancelWait {
				t.Errorf("failed after %v, past the call's 300ms timeout", el)
			}
			if got := len(f.received("tasks/cancel")); (got == 1) != c.cancelled {
				t.Errorf("%d tasks/cancel received, want cancelled=%v", got, c.cancelled)
			}
		})
	}

	t.Run("plain result to a task-augmented call", func(t *testing.T) {
		_, d := taskFake(t, `{"content":[{"type":"text","text":"direct"}]}`, "")
		s := open(t, d, nil)
		res, err := s.CallTool(context.Background(), "x", nil, &CallOptions{Task: &TaskOptions{}})
		if err != nil || firstText(t, res) != "direct" {
			t.Fatalf("CallTool: %v %+v", err, res)
		}
	})

	t.Run("no capability, no automatic task", func(t *testing.T) {
		f, d := newFake(t, func(f *fake, m msg) {
			if m.Method == "tools/list" {
				f.result(m, `{"tools":[{"name":"t","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}]}`)
				return
			}
			f.defaults(m)
		})
		s := open(t, d, nil)
		if _, err := s.ListTools(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CallTool(context.Background(), "t", nil, nil); err != nil {
			t.Fatal(err)
		}
		if calls := f.received("tools/call"); len(calls) != 1 || strings.Contains(string(calls[0].Params), `"task"`) {
			t.Errorf("tools/call %v: a server without the tasks capability got a task", calls)
		}
	})
}

// TestDecodeTask checks the task decoder against the TypeScript SDK's TaskSchema.
func TestDecodeTask(t *testing.T) {
	ok := `{"taskId":"x","status":"input_required","statusMessage":"m","createdAt":"2025-11-25T10:30:00.5Z","lastUpdatedAt":"2025-11-25T10:31:00Z","ttl":null,"pollInterval":1500}`
	got, err := decodeTask([]byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	if got.TaskID != "x" || got.Status != TaskInputRequired || got.StatusMessage != "m" || got.TTL != nil ||
		got.PollInterval != 1500*time.Millisecond || got.CreatedAt.Nanosecond() != 5e8 || got.Status.Terminal() {
		t.Errorf("decoded %+v", got)
	}
	for _, bad := range []string{
		`[]`, `{}`,
		`{"taskId":1,"status":"working","createdAt":"","lastUpdatedAt":"","ttl":1}`,
		`{"taskId":"x","status":"working","createdAt":"","lastUpdatedAt":"","ttl":"1"}`,
		`{"taskId":"x","status":"working","createdAt":"","lastUpdatedAt":"","ttl":-1}`,
		`{"taskId":"x","status":"working","createdAt":"","ttl":1}`,
		`{"taskId":"x","status":"working","createdAt":"","lastUpdatedAt":"","ttl":1,"pollInterval":"fast"}`,
		`{"taskId":"x","status":"working","createdAt":"","lastUpdatedAt":"","ttl":1,"statusMessage":3}`,
	} {
		if _, err := decodeTask([]byte(bad)); err == nil {
			t.Errorf("decodeTask(%s) succeeded", bad)
		}
	}
}
