package session

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"time"
)

// This file runs a tools/call as a task (2025-11-25, experimental), following the TypeScript
// SDK's client (callToolStream): tools/call with params.task → CreateTaskResult → tasks/get
// every pollInterval until the task is terminal (then tasks/result) or input_required (then
// tasks/result at once, which brings the server's queued requests and blocks until the task is
// terminal) → the tool result. The call's progress token stays routed to CallOptions.OnProgress
// until then (see progress.go).

// Poll intervals of a task-augmented call. The server's pollInterval is honoured within
// [MinTaskPollInterval, MaxTaskPollInterval]; without one the session polls every
// DefaultTaskPollInterval, as the TypeScript SDK does.
const (
	DefaultTaskPollInterval = time.Second
	MinTaskPollInterval     = 10 * time.Millisecond
	MaxTaskPollInterval     = 10 * time.Second
)

// taskCancelWait bounds the best-effort tasks/cancel sent when a task-augmented call is given up.
const taskCancelWait = time.Second

// taskFor returns the task options of a tools/call of name: the caller's, or, for a tool the
// last tools/list marked "required" on a server that declared task-augmented tools/call, the
// defaults; nil for a plain call. On such a server a session that has not listed the tools yet
// lists them first, once (see [Session.learnTools]).
func (s *Session) taskFor(ctx context.Context, name string, opts *CallOptions) *TaskOptions {
	if opts != nil && opts.Task != nil {
		return opts.Task
	}
	c := s.tools.Load()
	if c == nil && s.state.Load().toolTasks {
		c = s.learnTools(ctx)
	}
	if c == nil || c.tasks == nil {
		return nil
	}
	if c.tasks[name] != TaskSupportRequired || !s.state.Load().toolTasks {
		return nil
	}
	return &TaskOptions{}
}

// learnTools lists the tools once per session, for a server that declared task-augmented
// tools/call and a caller that never listed them: whether a tool must run as a task is only
// known from tools/list. It returns the cache, nil when the listing failed (the call then goes
// plain, and a later call does not try again).
func (s *Session) learnTools(ctx context.Context) *toolCache {
	s.learnMu.Lock()
	defer s.learnMu.Unlock()
	if c := s.tools.Load(); c != nil || s.learned {
		return c
	}
	s.learned = true
	_, _ = s.ListTools(ctx)
	return s.tools.Load()
}

// pollInterval is the wait before the next tasks/get after t.
func pollInterval(t *Task) time.Duration {
	if t.PollInterval <= 0 {
		return DefaultTaskPollInterval
	}
	return min(max(t.PollInterval, MinTaskPollInterval), MaxTaskPollInterval)
}

// callToolTask runs the tools/call r of tool name as a task. r.params is the plain
// {"name","arguments"} object; its timeout bounds the whole flow.
func (s *Session) callToolTask(ctx context.Context, r *request, name string, t *TaskOptions) (*ToolResult, error) {
	if s.Era() == EraStateless {
		return nil, &Error{Category: ProtocolError, Method: "tools/call", Message: "task-augmented tools/call is a 2025-11-25 feature; this session speaks " + s.ProtocolVersion(), Err: ErrNotInEra}
	}
	timeout := r.timeout
	if timeout <= 0 {
		timeout = s.opts.RequestTimeout
	}
	start := time.Now()
	fctx, cancel := context.WithDeadline(ctx, start.Add(timeout))
	defer cancel()

	params := append([]byte(nil), r.params[:len(r.params)-1]...)
	params = append(params, `,"task":{`...)
	if t.TTL > 0 {
		params = append(params, `"ttl":`...)
		params = strconv.AppendInt(params, t.TTL.Milliseconds(), 10)
	}
	params = append(params, "}}"...)
	call := *r
	call.params, call.timeout = params, timeout
	if call.progress != nil {
		// The progress token stays valid while the task runs: the reader keeps its route when
		// the answer comes, and it is forgotten when the flow ends (terminal status, failure,
		// the call's deadline or the caller's cancel), or at once for a direct answer.
		var ids atomic.Int64
		call.keepProgress, call.ids = true, &ids
		defer func() { s.forgetProgress(ids.Load()) }()
	}
	var created Response
	if e := s.run(fctx, &call, &created); e != nil {
		return nil, e
	}
	task, isTask, e := createdTask(&created)
	if e != nil {
		return nil, e
	}
	if !isTask {
		// The server ran the call directly: a receiver that does not support tasks for this
		// request processes it normally, ignoring params.task.
		return toolResult(&created)
	}
	f := taskFlow{s: s, ctx: ctx, fctx: fctx, name: name, task: task, sent: created.Timing.Sent, timeout: timeout}
	return f.run()
}

// createdTask reads the result of a task-augmented tools/call: a CreateTaskResult (isTask), or
// a plain tool result (the server ignored params.task). A task member that is not a valid task
// fails as ProtocolError.
func createdTask(resp *Response) (*Task, bool, *Error) {
	var raw []byte
	if err := eachMember(resp.Result, func(k, v []byte) {
		if keyIs(k, "task") {
			raw = v
		}
	}); err != nil {
		return nil, false, &Error{Category: ProtocolError, Method: "tools/call", ID: resp.ID, Elapsed: resp.Timing.Latency,
			Message: "the tools/call result is not an object", Frame: excerpt(resp.Result)}
	}
	if raw == nil {
		return nil, false, nil
	}
	task, err := decodeTask(raw)
	if err != nil {
		return nil, false, &Error{Category: ProtocolError, Method: "tools/call", ID: resp.ID, Elapsed: resp.Timing.Latency,
			Message: "the CreateTaskResult's task is invalid: " + err.Error(), Frame: excerpt(resp.Result),
			Hint: "a task-augmented request must be answered with {task:{taskId, status, createdAt, lastUpdatedAt, ttl}} (2025-11-25)"}
	}
	return task, true, nil
}

// taskFlow is one task-augmented tools/call after its task was created.
type taskFlow struct {
	s *Session
	// ctx is the caller's context; fctx is it bounded by the call's timeout.
	ctx, fctx context.Context
	name      string
	task      *Task
	// sent is when the tools/call went out: the result's latency counts from it.
	sent    time.Time
	timeout time.Duration
}

// run polls the task to its end and returns the tool result.
func (f *taskFlow) run() (*ToolResult, error) {
	wake, forget := f.s.watchTask(f.task.TaskID)
	defer forget()
	for {
		switch f.task.Status {
		case TaskCompleted, TaskInputRequired:
			// input_required: tasks/result delivers the server's queued requests to the
			// session's handlers and answers once the task is terminal (TypeScript SDK).
			return f.result()
		case TaskFailed:
			return f.failed()
		case TaskCancelled:
			return nil, f.fail(ServerError, "the server cancelled task "+strconv.Quote(f.task.TaskID)+statusSuffix(f.task), nil)
		}
		if e := f.sleep(wake, pollInterval(f.task)); e != nil {
			return nil, e
		}
		t, e := f.s.taskRequest(f.fctx, "tasks/get", f.task.TaskID, time.Until(f.deadline()), true)
		if e != nil {
			return nil, f.subFailed(e)
		}
		f.task = t
	}
}

func (f *taskFlow) deadline() time.Time {
	d, _ := f.fctx.Deadline()
	return d
}

// sleep waits d, or less when a status notification for the task arrives; it fails when the
// caller's context or the call's deadline ends first.
func (f *taskFlow) sleep(wake <-chan struct{}, d time.Duration) *Error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-wake:
		return nil
	case <-f.fctx.Done():
		return f.givenUp()
	}
}

// result fetches tasks/result and decodes it as the tool result.
func (f *taskFlow) result() (*ToolResult, error) {
	resp, e := f.s.do(f.fctx, &request{method: "tasks/result", params: taskParams(f.task.TaskID), plain: true,
		noHang: true, quiet: true, timeout: time.Until(f.deadline())})
	if e != nil {
		return nil, f.subFailed(e)
	}
	tr, err := toolResult(resp)
	if err != nil {
		return nil, err
	}
	tr.Timing.spanFrom(f.sent)
	return tr, nil
}

// failed handles a task the server reports failed. For tools/call, failed includes a result
// with isError: when tasks/result gives such a result, it is returned as a plain call's would be
// (a tool error, nil error). Otherwise the call fails as ServerError with the statusMessage and,
// when tasks/result answered with a JSON-RPC error, its code, message and data.
func (f *taskFlow) failed() (*ToolResult, error) {
	msg := "task " + strconv.Quote(f.task.TaskID) + " failed" + statusSuffix(f.task)
	resp, e := f.s.do(f.fctx, &request{method: "tasks/result", params: taskParams(f.task.TaskID), plain: true,
		noHang: true, quiet: true, timeout: time.Until(f.deadline())})
	if e == nil {
		tr, err := toolResult(resp)
		if err == nil && tr.IsError {
			tr.Timing.spanFrom(f.sent)
			return tr, nil
		}
		return nil, f.fail(ServerError, msg, nil)
	}
	if e.Category == Cancelled || e.Category == Timeout || e.Category == Crash || e.Category == Disconnected {
		return nil, f.subFailed(e)
	}
	out := f.fail(ServerError, msg, e)
	out.Code, out.Data = e.Code, e.Data
	if e.Code != 0 && e.Message != f.task.StatusMessage {
		out.Message = msg + "; tasks/result: " + e.Message
	}
	return nil, out
}

// fail builds the call's failure.
func (f *taskFlow) fail(cat Category, msg string, cause error) *Error {
	return &Error{Category: cat, Method: "tools/call", Message: msg, Elapsed: time.Since(f.sent), Err: cause,
		Hint: "tools/call " + strconv.Quote(f.name) + " ran as task " + strconv.Quote(f.task.TaskID)}
}

// givenUp is the failure of a call whose caller cancelled it or whose deadline passed while the
// task ran; the task is cancelled at the server, best effort.
func (f *taskFlow) givenUp() *Error {
	f.cancelAtServer()
	if err := f.ctx.Err(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		e := f.fail(Cancelled, "cancelled by the caller while task "+strconv.Quote(f.task.TaskID)+" was "+string(f.task.Status), err)
		return e
	}
	return f.fail(Timeout, "task "+strconv.Quote(f.task.TaskID)+" still "+string(f.task.Status)+" after "+
		time.Since(f.sent).Round(time.Millisecond).String()+statusSuffix(f.task), f.fctx.Err())
}

// subFailed adapts the failure of a tasks/get or tasks/result of the flow: a cancel or timeout
// ends the call as givenUp does (each of those requests has only the rest of the call's time,
// so its Timeout is the call's, even when its own timer fired a moment before fctx's); any other
// failure is returned as it is, with the task named.
func (f *taskFlow) subFailed(e *Error) *Error {
	if e.Category == Timeout || (e.Category == Cancelled && f.fctx.Err() != nil) {
		out := f.givenUp()
		out.Err = e
		return out
	}
	e.Hint = joinHint(e.Hint, "during tools/call "+strconv.Quote(f.name)+" as task "+strconv.Quote(f.task.TaskID))
	return e
}

// cancelAtServer sends tasks/cancel for the flow's task, bounded by taskCancelWait and
// detached from the caller's context, ignoring the outcome.
func (f *taskFlow) cancelAtServer() {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(f.ctx), taskCancelWait)
	defer cancel()
	_, _ = f.s.taskRequest(ctx, "tasks/cancel", f.task.TaskID, taskCancelWait, true)
}

func statusSuffix(t *Task) string {
	if t.StatusMessage == "" {
		return ""
	}
	return ": " + t.StatusMessage
}
