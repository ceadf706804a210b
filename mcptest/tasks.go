package mcptest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// This file is the tasks utility of 2025-11-25 (experimental), behind [Options.Tasks]: a
// tools/call with params.task of a tool whose execution.taskSupport is "required" or
// "optional" is answered at once with a CreateTaskResult, and the tool runs in the background
// as a job; tasks/get, tasks/result, tasks/list and tasks/cancel reach it through a bounded,
// per-session in-memory store. A job's requests to the client (the ask argument of job) move
// the task to input_required and wait for a tasks/result, on whose stream they are sent with
// the io.modelcontextprotocol/related-task _meta, as the TypeScript SDK's servers do.

// Task limits of the reference server.
const (
	// MaxTasks caps the tasks one session keeps; past it the oldest terminal task is dropped,
	// and a task-augmented call with every kept task still running is answered -32603.
	MaxTasks = 100
	// DefaultTaskTTL is a task's lifetime when the request asks for none; MaxTaskTTL caps
	// what a request may ask. A task is forgotten (and its job stopped) once its ttl passes.
	DefaultTaskTTL = time.Minute
	MaxTaskTTL     = 10 * time.Minute
	// DefaultTaskPollInterval is the pollInterval a task suggests unless the job tool's poll_ms
	// argument says otherwise.
	DefaultTaskPollInterval = 50 * time.Millisecond
)

// relatedTaskKey is the _meta key that ties a message to a task.
const relatedTaskKey = "io.modelcontextprotocol/related-task"

// Task statuses.
const (
	taskWorking       = "working"
	taskInputRequired = "input_required"
	taskCompleted     = "completed"
	taskFailed        = "failed"
	taskCancelled     = "cancelled"
)

func terminal(status string) bool {
	return status == taskCompleted || status == taskFailed || status == taskCancelled
}

// taskArgs is params.task of a task-augmented request.
type taskArgs struct {
	TTL *float64 `json:"ttl"`
}

// srvTask is one task and its job.
type srvTask struct {
	id      string
	created time.Time
	ttl     time.Duration
	poll    time.Duration
	cancel  context.CancelFunc // stops the job

	mu      sync.Mutex // guards the fields below
	status  string
	message string
	updated time.Time
	result  *toolResult
	rerr    *rpcError
	// changed is closed and replaced on every change of status (a broadcast).
	changed chan struct{}
	// asks holds the job's requests for the client not yet taken by a tasks/result.
	asks []*taskAsk
}

// taskAsk is a request the job needs sent to the client, and where its answer goes.
type taskAsk struct {
	method string
	params any
	reply  chan askReply // buffered 1
}

type askReply struct {
	result json.RawMessage
	err    error
}

// wire returns the task as the protocol's Task object.
func (t *srvTask) wire() map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.wireLocked()
}

func (t *srvTask) wireLocked() map[string]any {
	m := map[string]any{
		"taskId":        t.id,
		"status":        t.status,
		"createdAt":     t.created.UTC().Format(time.RFC3339Nano),
		"lastUpdatedAt": t.updated.UTC().Format(time.RFC3339Nano),
		"ttl":           t.ttl.Milliseconds(),
		"pollInterval":  t.poll.Milliseconds(),
	}
	if t.message != "" {
		m["statusMessage"] = t.message
	}
	return m
}

// setLocked changes the status (never out of a terminal one) and wakes the waiters; it
// reports whether it did.
func (t *srvTask) setLocked(status, message string) bool {
	if terminal(t.status) {
		return false
	}
	t.status, t.message, t.updated = status, message, time.Now()
	close(t.changed)
	t.changed = make(chan struct{})
	return true
}

// taskStore is one session's tasks.
type taskStore struct {
	mu sync.Mutex // guards m
	m  map[string]*srvTask
}

// sweepLocked forgets expired tasks and stops their jobs.
func (s *taskStore) sweepLocked(now time.Time) {
	for id, t := range s.m {
		if now.Sub(t.created) >= t.ttl {
			t.cancel()
			delete(s.m, id)
		}
	}
}

// add keeps t, making room by dropping the oldest terminal task when the store is full.
func (s *taskStore) add(t *srvTask) *rpcError {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[string]*srvTask)
	}
	s.sweepLocked(time.Now())
	if len(s.m) >= MaxTasks {
		var oldest *srvTask
		for _, o := range s.m {
			o.mu.Lock()
			done := terminal(o.status)
			o.mu.Unlock()
			if done && (oldest == nil || o.created.Before(oldest.created)) {
				oldest = o
			}
		}
		if oldest == nil {
			return newError(CodeInternalError, "too many running tasks (%d) in this session", MaxTasks)
		}
		delete(s.m, oldest.id)
	}
	s.m[t.id] = t
	return nil
}

func (s *taskStore) get(id string) (*srvTask, *rpcError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(time.Now())
	t := s.m[id]
	if t == nil {
		return nil, newError(CodeInvalidParams, "Failed to retrieve task: Task not found")
	}
	return t, nil
}

// list returns the tasks oldest first.
func (s *taskStore) list() []*srvTask {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(time.Now())
	out := make([]*srvTask, 0, len(s.m))
	for _, t := range s.m {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *srvTask) int { return a.created.Compare(b.created) })
	return out
}

// tasks returns the session's task store, creating it on first use.
func (s *sessionState) taskStore() *taskStore {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tasks == nil {
		s.tasks = &taskStore{}
	}
	return s.tasks
}

// tasksOn reports whether the call's session has tasks: [Options.Tasks] and a legacy session
// that negotiated 2025-11-25.
func (b *Backend) tasksOn(c *call) bool {
	if !b.opts.Tasks || c.stateless {
		return false
	}
	st := c.peer.session()
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.version == LatestLegacyVersion
}

// tasksCapability is the server's tasks capability.
func tasksCapability() map[string]any {
	return map[string]any{
		"list":     map[string]any{},
		"cancel":   map[string]any{},
		"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}},
	}
}

// startTask answers a task-augmented tools/call of tool t: it creates the task, starts the
// job and returns the CreateTaskResult.
func (b *Backend) startTask(tc *toolCall, t *tool, ta *taskArgs) (any, *rpcError) {
	ttl := DefaultTaskTTL
	if ta.TTL != nil && *ta.TTL > 0 && !math.IsInf(*ta.TTL, 0) {
		ttl = min(time.Duration(*ta.TTL)*time.Millisecond, MaxTaskTTL)
	}
	poll := DefaultTaskPollInterval
	if ms, err := tc.args.integer("poll_ms", false, 0); err == nil && ms > 0 {
		poll = time.Duration(min(ms, 10000)) * time.Millisecond
	}
	var idb [16]byte
	_, _ = rand.Read(idb[:])
	now := time.Now()
	task := &srvTask{id: hex.EncodeToString(idb[:]), created: now, updated: now, ttl: ttl, poll: poll,
		status: taskWorking, changed: make(chan struct{})}
	ctx, cancel := context.WithDeadline(b.ctx, now.Add(ttl))
	task.cancel = cancel
	if err := tc.peer.session().taskStore().add(task); err != nil {
		cancel()
		return nil, err
	}
	creator := tc.peer
	job := &toolCall{call: &call{ctx: ctx, peer: &taskPeer{creator: creator, t: task}, req: tc.req, stateless: false},
		args: tc.args, token: tc.token, params: tc.params}
	b.jobs.Add(1)
	go func() {
		defer b.jobs.Done()
		defer cancel()
		res, rerr := t.run(b, job)
		if res == nil && rerr == nil {
			res = textResult("")
		}
		task.mu.Lock()
		var changed bool
		switch {
		case rerr != nil:
			task.rerr = rerr
			changed = task.setLocked(taskFailed, rerr.Message)
		case res.IsError:
			task.result = res
			changed = task.setLocked(taskFailed, "the tool reported an error (isError)")
		default:
			task.result = res
			changed = task.setLocked(taskCompleted, "")
		}
		w := task.wireLocked()
		task.mu.Unlock()
		if changed {
			_ = creator.notify(ctx, "notifications/tasks/status", w)
		}
	}()
	return map[string]any{"task": task.wire()}, nil
}

// taskPeer is the peer a job sees: its notifications go to the creating request's peer, its
// requests to the client wait for a tasks/result to carry them.
type taskPeer struct {
	creator peer
	t       *srvTask
}

func (p *taskPeer) notify(ctx context.Context, method string, params any) error {
	return p.creator.notify(ctx, method, params)
}

func (p *taskPeer) session() *sessionState { return p.creator.session() }

// request queues a request for the client, moves the task to input_required until the answer
// comes, and waits for it (at most MaxAskWait).
func (p *taskPeer) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	a := &taskAsk{method: method, params: params, reply: make(chan askReply, 1)}
	t := p.t
	t.mu.Lock()
	t.asks = append(t.asks, a)
	t.setLocked(taskInputRequired, "waiting for the client's answer to "+method)
	w := t.wireLocked()
	t.mu.Unlock()
	_ = p.creator.notify(ctx, "notifications/tasks/status", w)
	timer := time.NewTimer(MaxAskWait)
	defer timer.Stop()
	var r askReply
	select {
	case r = <-a.reply:
	case <-ctx.Done():
		r.err = fmt.Errorf("waiting for the answer to %s: %w", method, ctx.Err())
	case <-timer.C:
		r.err = fmt.Errorf("no tasks/result carried %s within %v", method, MaxAskWait)
	}
	t.mu.Lock()
	t.asks = slices.DeleteFunc(t.asks, func(x *taskAsk) bool { return x == a })
	if len(t.asks) == 0 && t.status == taskInputRequired {
		t.setLocked(taskWorking, "")
	}
	t.mu.Unlock()
	return r.result, r.err
}

// taskOf finds the task a tasks/* request names.
func (b *Backend) taskOf(c *call) (*srvTask, *rpcError) {
	if !b.tasksOn(c) {
		return nil, newError(CodeMethodNotFound, "method not found: %s (tasks are off, or the session did not negotiate %s)", c.req.Method, LatestLegacyVersion)
	}
	var p struct {
		TaskID *string `json:"taskId"`
	}
	if err := unmarshalParams(c.req.Params, &p); err != nil {
		return nil, err
	}
	if p.TaskID == nil {
		return nil, newError(CodeInvalidParams, "missing taskId")
	}
	return c.peer.session().taskStore().get(*p.TaskID)
}

func (b *Backend) getTask(c *call) (any, *rpcError) {
	t, err := b.taskOf(c)
	if err != nil {
		return nil, err
	}
	return t.wire(), nil
}

func (b *Backend) cancelTask(c *call) (any, *rpcError) {
	t, err := b.taskOf(c)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	if terminal(t.status) {
		st := t.status
		t.mu.Unlock()
		return nil, newError(CodeInvalidParams, "Cannot cancel task in terminal status: %s", st)
	}
	t.setLocked(taskCancelled, "The task was cancelled by request.")
	w := t.wireLocked()
	t.mu.Unlock()
	t.cancel()
	return w, nil
}

func (b *Backend) listTasks(c *call) (any, *rpcError) {
	if !b.tasksOn(c) {
		return nil, newError(CodeMethodNotFound, "method not found: tasks/list")
	}
	all := c.peer.session().taskStore().list()
	list, next, err := page(all, c.req.Params, b.opts.PageSize, "tasks")
	if err != nil {
		return nil, err
	}
	tasks := make([]any, 0, len(list))
	for _, t := range list {
		tasks = append(tasks, t.wire())
	}
	res := map[string]any{"tasks": tasks}
	if next != "" {
		res["nextCursor"] = next
	}
	return res, nil
}

// taskResult answers tasks/result: it carries the job's requests to the client on this
// request's stream and answers, once the task is terminal, with the job's result or error.
func (b *Backend) taskResult(c *call) (any, *rpcError) {
	t, err := b.taskOf(c)
	if err != nil {
		return nil, err
	}
	related := map[string]any{relatedTaskKey: map[string]any{"taskId": t.id}}
	for {
		t.mu.Lock()
		status, changed := t.status, t.changed
		var ask *taskAsk
		if len(t.asks) > 0 && !terminal(status) {
			ask = t.asks[0]
			t.asks = t.asks[1:]
		}
		res, rerr := t.result, t.rerr
		t.mu.Unlock()
		switch {
		case ask != nil:
			params := withMeta(ask.params, related)
			r, err := c.peer.request(c.ctx, ask.method, params)
			ask.reply <- askReply{r, err} // buffered: never blocks
			continue
		case status == taskCancelled:
			return nil, newError(CodeInternalError, "task %s was cancelled", t.id)
		case terminal(status) && rerr != nil:
			return nil, rerr
		case terminal(status):
			out := *res
			out.Meta = related
			return &out, nil
		}
		select {
		case <-changed:
		case <-c.ctx.Done():
			return nil, newError(CodeInternalError, "tasks/result: %v", c.ctx.Err())
		}
	}
}

// withMeta adds _meta members to a request's params (a map; other values are sent as they are).
func withMeta(params any, meta map[string]any) any {
	m, ok := params.(map[string]any)
	if !ok {
		return params
	}
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	out["_meta"] = meta
	return out
}
