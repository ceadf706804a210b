package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/resources"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// Bounds of what a session keeps for the page.
const (
	maxFrames    = 500                         // raw frames kept per session, the oldest dropped first
	maxFrameSize = 256 << 10                   // bytes kept of one frame
	maxSessions  = 16                          // sessions open at once
	stderrTail   = 64 << 10                    // bytes of stderr shown
	callTimeout  = askTimeout + 15*time.Second // a call may wait for the person to answer a request
)

// sessions holds the UI's open sessions.
type sessions struct {
	o      Options
	events *broker

	// mu guards next and open.
	mu   sync.Mutex
	next int
	open map[string]*liveSession
}

func newSessions(o Options, ev *broker) *sessions {
	return &sessions{o: o, events: ev, open: map[string]*liveSession{}}
}

// liveSession is one open session with what the page shows of it.
type liveSession struct {
	ID       string
	Spec     string
	conn     *serverconn.Conn
	dir      string // holds the stderr file; removed on close
	started  time.Time
	sampler  *resources.Tree
	tools    []session.Tool
	res      []session.Resource
	tmpls    []session.ResourceTemplate
	prompts  []session.Prompt
	listErrs map[string]string
	asks     *asks

	// mu guards frames, seq, lastErr and closed.
	mu      sync.Mutex
	frames  []frameJSON
	seq     int
	lastErr error
	closed  bool
}

// frameJSON is one raw frame as the page shows it.
type frameJSON struct {
	Seq  int       `json:"seq"`
	Dir  string    `json:"dir"` // "sent" or "received"
	At   time.Time `json:"at"`
	Data string    `json:"data"`
	Err  string    `json:"error,omitempty"`
}

func (l *liveSession) onFrame(dir session.Direction, f transport.Frame) {
	d := "received"
	if dir == session.Sent {
		d = "sent"
	}
	data := f.Data
	if len(data) > maxFrameSize {
		data = data[:maxFrameSize]
	}
	fj := frameJSON{Dir: d, At: f.At, Data: string(data)}
	if fj.At.IsZero() {
		fj.At = time.Now()
	}
	if f.Err != nil {
		fj.Err = f.Err.Error()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	fj.Seq = l.seq
	l.frames = append(l.frames, fj)
	if len(l.frames) > maxFrames {
		l.frames = l.frames[len(l.frames)-maxFrames:]
	}
}

// noteErr remembers the last failure of the session (its process's exit shows there).
func (l *liveSession) noteErr(err error) {
	if err == nil {
		return
	}
	l.mu.Lock()
	l.lastErr = err
	l.mu.Unlock()
}

// sessionJSON describes an open session.
type sessionJSON struct {
	ID              string                 `json:"id"`
	Spec            string                 `json:"spec"`
	Transport       string                 `json:"transport"`
	ProtocolVersion string                 `json:"protocolVersion"`
	ServerInfo      session.Implementation `json:"serverInfo"`
	Capabilities    json.RawMessage        `json:"capabilities"`
	Instructions    string                 `json:"instructions,omitempty"`
	PID             int                    `json:"pid,omitempty"`
	Tools           []json.RawMessage      `json:"tools"`
	Resources       []json.RawMessage      `json:"resources"`
	Prompts         []json.RawMessage      `json:"prompts"`
	Templates       []json.RawMessage      `json:"resourceTemplates"`
	ListErrors      map[string]string      `json:"listErrors,omitempty"`
}

func (l *liveSession) describe() sessionJSON {
	c := l.conn
	out := sessionJSON{ID: l.ID, Spec: l.Spec, Transport: string(c.Transport), ProtocolVersion: c.ProtocolVersion(),
		ServerInfo: c.ServerInfo(), Capabilities: c.ServerCapabilities(), Instructions: c.Instructions(),
		Tools: []json.RawMessage{}, Resources: []json.RawMessage{}, Prompts: []json.RawMessage{}, Templates: []json.RawMessage{}, ListErrors: l.listErrs}
	if len(out.Capabilities) == 0 {
		out.Capabilities = json.RawMessage("{}")
	}
	if c.Process != nil {
		out.PID = c.Process.PID()
	}
	for _, t := range l.tools {
		out.Tools = append(out.Tools, raw(t.Raw, t))
	}
	for _, r := range l.res {
		out.Resources = append(out.Resources, raw(r.Raw, r))
	}
	for _, p := range l.prompts {
		out.Prompts = append(out.Prompts, raw(p.Raw, p))
	}
	for _, t := range l.tmpls {
		out.Templates = append(out.Templates, raw(t.Raw, t))
	}
	return out
}

// raw is b, or v marshalled when b is empty.
func raw(b json.RawMessage, v any) json.RawMessage {
	if len(b) > 0 && json.Valid(b) {
		return b
	}
	out, _ := json.Marshal(v)
	return out
}

// connect opens a session to SPEC s (already allowed) and lists what it offers.
func (ss *sessions) connect(w http.ResponseWriter, r *http.Request, s string) {
	ss.mu.Lock()
	if len(ss.open) >= maxSessions {
		ss.mu.Unlock()
		writeError(w, http.StatusTooManyRequests, fmt.Sprintf("%d sessions are open: disconnect one first", maxSessions))
		return
	}
	ss.next++
	id := "s" + strconv.Itoa(ss.next)
	ss.mu.Unlock()

	dir, err := os.MkdirTemp(ss.o.TempDir, "mcpspec-ui-")
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	l := &liveSession{ID: id, Spec: s, dir: dir, started: time.Now(), listErrs: map[string]string{}, asks: newAsks(ss.events, id)}
	dial, info, err := serverconn.SpecDial(s, &spec.Options{Executable: ss.o.Executable})
	if err != nil {
		os.RemoveAll(dir)
		writeFailure(w, http.StatusBadRequest, err)
		return
	}
	op := serverconn.New(serverconn.Options{Name: s, Info: info, Dial: dial,
		StderrFile: func(int) string { return filepath.Join(dir, "stderr.log") },
		Session: session.Options{OnFrame: l.onFrame, RequestTimeout: callTimeout,
			// Sampling and elicitation requests are answered by the person at the page.
			OnRequest: l.asks.onRequest, Declare: session.ClientCapabilities{Sampling: true, Elicitation: true}}})
	// The session outlives this request: it ends when the page disconnects it or the UI stops.
	conn, err := op.Open(context.WithoutCancel(r.Context()))
	if err != nil {
		os.RemoveAll(dir)
		writeFailure(w, http.StatusBadGateway, err)
		return
	}
	l.conn = conn
	if conn.Process != nil {
		if t, err := resources.ProcessTree(conn.Process.PID()); err == nil {
			l.sampler = t
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), callTimeout)
	defer cancel()
	if l.tools, err = conn.ListTools(ctx); err != nil {
		l.listErrs["tools"] = err.Error()
	}
	if hasCap(conn.ServerCapabilities(), "resources") {
		if l.res, err = conn.ListResources(ctx); err != nil {
			l.listErrs["resources"] = err.Error()
		}
		if l.tmpls, err = conn.ListResourceTemplates(ctx); err != nil {
			l.listErrs["resourceTemplates"] = err.Error()
		}
	}
	if hasCap(conn.ServerCapabilities(), "prompts") {
		if l.prompts, err = conn.ListPrompts(ctx); err != nil {
			l.listErrs["prompts"] = err.Error()
		}
	}
	ss.mu.Lock()
	ss.open[id] = l
	ss.mu.Unlock()
	ss.events.publish("session", map[string]any{"id": id, "state": "open", "spec": s})
	writeJSON(w, http.StatusOK, l.describe())
}

// hasCap reports whether capabilities has the member name.
func hasCap(caps json.RawMessage, name string) bool {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(caps, &m)
	_, ok := m[name]
	return ok
}

func (ss *sessions) get(w http.ResponseWriter, r *http.Request) (*liveSession, bool) {
	ss.mu.Lock()
	l := ss.open[r.PathValue("id")]
	ss.mu.Unlock()
	if l == nil {
		writeError(w, http.StatusNotFound, "no open session "+r.PathValue("id")+": connect again")
		return nil, false
	}
	return l, true
}

func (ss *sessions) list(w http.ResponseWriter, _ *http.Request) {
	ss.mu.Lock()
	out := make([]sessionJSON, 0, len(ss.open))
	for _, l := range ss.open {
		out = append(out, l.describe())
	}
	ss.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (ss *sessions) disconnect(w http.ResponseWriter, r *http.Request) {
	l, ok := ss.get(w, r)
	if !ok {
		return
	}
	ss.mu.Lock()
	delete(ss.open, l.ID)
	ss.mu.Unlock()
	l.close()
	ss.events.publish("session", map[string]any{"id": l.ID, "state": "closed"})
	writeJSON(w, http.StatusOK, map[string]string{"id": l.ID, "state": "closed"})
}

func (l *liveSession) close() {
	l.mu.Lock()
	done := l.closed
	l.closed = true
	l.mu.Unlock()
	if done {
		return
	}
	close(l.asks.closed)
	_ = l.conn.Close()
	_ = os.RemoveAll(l.dir)
}

// closeAll closes every session (stopping their servers).
func (ss *sessions) closeAll() {
	ss.mu.Lock()
	open := ss.open
	ss.open = map[string]*liveSession{}
	ss.mu.Unlock()
	var wg sync.WaitGroup
	for _, l := range open {
		wg.Go(l.close)
	}
	wg.Wait()
}

// processJSON is the process monitor of a stdio session.
type processJSON struct {
	PID        int     `json:"pid,omitempty"`
	Running    bool    `json:"running"`
	UptimeSec  float64 `json:"uptimeSec"`
	RSSMB      float64 `json:"rssMb,omitempty"`
	CPUPercent float64 `json:"cpuPercent,omitempty"`
	Threads    int     `json:"threads,omitempty"`
	FDs        int     `json:"fds,omitempty"`
	ExitCode   *int    `json:"exitCode,omitempty"`
	Signal     string  `json:"signal,omitempty"`
	Stderr     string  `json:"stderr"`
	LastError  string  `json:"lastError,omitempty"`
}

func (ss *sessions) process(w http.ResponseWriter, r *http.Request) {
	l, ok := ss.get(w, r)
	if !ok {
		return
	}
	out := processJSON{UptimeSec: time.Since(l.started).Seconds()}
	if p := l.conn.Process; p != nil {
		out.PID = p.PID()
		if path := p.StderrPath(); path != "" {
			size := serverconn.FileSize(path)
			out.Stderr = serverconn.ReadTail(path, max(0, size-stderrTail), stderrTail)
		} else {
			out.Stderr = p.StderrTail()
		}
	}
	if l.sampler != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		smp, err := l.sampler.Sample(ctx)
		cancel()
		if err == nil {
			out.Running = true
			out.RSSMB = float64(smp.RSSBytes) / (1 << 20)
			out.CPUPercent, out.Threads, out.FDs = smp.CPUPercent, smp.Threads, smp.FDs
		}
	}
	l.mu.Lock()
	lastErr := l.lastErr
	l.mu.Unlock()
	var exit *transport.ExitError
	if errors.As(lastErr, &exit) {
		out.Running, out.ExitCode, out.Signal = false, &exit.Code, exit.Signal
	}
	if lastErr != nil {
		out.LastError = lastErr.Error()
	}
	writeJSON(w, http.StatusOK, out)
}

func (ss *sessions) frames(w http.ResponseWriter, r *http.Request) {
	l, ok := ss.get(w, r)
	if !ok {
		return
	}
	after, _ := strconv.Atoi(r.URL.Query().Get("after"))
	l.mu.Lock()
	out := []frameJSON{}
	for _, f := range l.frames {
		if f.Seq > after {
			out = append(out, f)
		}
	}
	l.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// callResultJSON is the answer to a call, a read or a prompt.
type callResultJSON struct {
	OK        bool            `json:"ok"`
	IsError   bool            `json:"isError,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *failureJSON    `json:"error,omitempty"`
	LatencyMS float64         `json:"latencyMs"`
	Frames    []frameJSON     `json:"frames"`
}

// failureJSON is a Go error as the page shows it.
type failureJSON struct {
	Message  string `json:"message"`
	Category string `json:"category,omitempty"`
	Code     int    `json:"code,omitempty"`
	Data     string `json:"data,omitempty"`
	Hint     string `json:"hint,omitempty"`
}

func newFailure(err error) *failureJSON {
	f := &failureJSON{Message: err.Error()}
	var se *session.Error
	if errors.As(err, &se) {
		f.Category, f.Code, f.Data, f.Hint = string(se.Category), se.Code, string(se.Data), se.Hint
	}
	var he interface{ Hint() string }
	if f.Hint == "" && errors.As(err, &he) {
		f.Hint = he.Hint()
	}
	return f
}

func writeFailure(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, map[string]any{"error": newFailure(err).Message, "failure": newFailure(err)})
}

// exchange runs fn and answers with its result and the frames it caused.
func (l *liveSession) exchange(w http.ResponseWriter, r *http.Request, fn func(ctx context.Context) (json.RawMessage, bool, error)) {
	l.mu.Lock()
	from := l.seq
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(r.Context(), callTimeout)
	defer cancel()
	start := time.Now()
	res, isErr, err := fn(ctx)
	out := callResultJSON{OK: err == nil, IsError: isErr, Result: res, LatencyMS: float64(time.Since(start).Microseconds()) / 1000, Frames: []frameJSON{}}
	if err != nil {
		l.noteErr(err)
		out.Error = newFailure(err)
	}
	l.mu.Lock()
	for _, f := range l.frames {
		if f.Seq > from {
			out.Frames = append(out.Frames, f)
		}
	}
	l.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (ss *sessions) call(w http.ResponseWriter, r *http.Request) {
	l, ok := ss.get(w, r)
	if !ok {
		return
	}
	var req struct {
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	if len(req.Arguments) == 0 || string(req.Arguments) == "null" {
		req.Arguments = json.RawMessage("{}")
	}
	l.exchange(w, r, func(ctx context.Context) (json.RawMessage, bool, error) {
		res, err := l.conn.CallTool(ctx, req.Tool, req.Arguments, nil)
		if err != nil {
			return nil, false, err
		}
		return res.Raw, res.IsError, nil
	})
}

func (ss *sessions) read(w http.ResponseWriter, r *http.Request) {
	l, ok := ss.get(w, r)
	if !ok {
		return
	}
	var req struct {
		URI string `json:"uri"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	l.exchange(w, r, func(ctx context.Context) (json.RawMessage, bool, error) {
		res, err := l.conn.ReadResource(ctx, req.URI)
		if err != nil {
			return nil, false, err
		}
		return res.Result, false, nil
	})
}

func (ss *sessions) prompt(w http.ResponseWriter, r *http.Request) {
	l, ok := ss.get(w, r)
	if !ok {
		return
	}
	var req struct {
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	l.exchange(w, r, func(ctx context.Context) (json.RawMessage, bool, error) {
		res, err := l.conn.GetPrompt(ctx, req.Name, req.Arguments)
		if err != nil {
			return nil, false, err
		}
		return res.Result, false, nil
	})
}
