package mcptest

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// handler answers one decoded request. It returns nil to write nothing (a notification, or a
// request that was cancelled or hung until its context ended).
type handler interface {
	handle(ctx context.Context, p peer, req *request) *response
}

// peer is the connection a request arrived on, as a handler sees it.
type peer interface {
	// notify sends a notification to the client, on the stream the request belongs to when the
	// transport has one. It never blocks beyond ctx.
	notify(ctx context.Context, method string, params any) error
	// session is the per-connection (legacy: per-session) state.
	session() *sessionState
	// request sends the client a request and waits for its result; a JSON-RPC error from the
	// client is returned as an *rpcError. It gives up when ctx ends or after MaxAskWait.
	request(ctx context.Context, method string, params any) (json.RawMessage, error)
}

// sessionState is what the legacy era remembers between requests of one session.
type sessionState struct {
	mu          sync.Mutex // guards the fields below
	initialized bool
	version     string
	logLevel    string
	clientCaps  map[string]json.RawMessage // the capabilities initialize declared
	tasks       *taskStore                 // the session's tasks (Options.Tasks), created on first use
	callSlot    chan struct{}              // one tools/call at a time (Options.SerializeSession), created on first use
}

func (s *sessionState) setClientCapabilities(caps map[string]json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clientCaps = caps
}

// hasCapability reports whether the client declared the named capability at initialize.
func (s *sessionState) hasCapability(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.clientCaps[name]
	return ok && string(v) != "null"
}

func (s *sessionState) setInitialized(version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initialized = true
	s.version = version
}

func (s *sessionState) isInitialized() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.initialized
}

func (s *sessionState) setLogLevel(level string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logLevel = level
}

// Backend is one reference server: its tools, resources and prompts, its failure modes and the
// counters behind [Stats]. Every connection of one server shares one Backend, so "the first
// tools/call" and the crash sequence count across connections, as they would in one process.
//
// A Backend is safe for concurrent use. [Server] and [TCPServer] own one each; use one directly
// to serve in-memory connections with [Backend.ServeConn].
type Backend struct {
	opts Options
	log  *slog.Logger
	root handler // the fault middleware wrapping the well-behaved dispatcher

	// ctx is cancelled by Close: every hung call and open stream ends with it.
	ctx    context.Context
	cancel context.CancelFunc

	stateKey []byte // signs the confirm tool's requestState

	requests, toolCalls, inFlight, maxInFlight atomic.Int64
	crashes, malformed, leaked, sessions       atomic.Int64
	resumes                                    atomic.Int64

	// jobs counts the running jobs of tasks (Options.Tasks); Close waits for them.
	jobs sync.WaitGroup

	faults faultState
	// workers are the slots of Options.Workers (one for Serialize): a tools/call runs while it
	// holds one; nil when calls are not limited.
	workers chan struct{}
	// stallClock starts at the first tools/call (Options.Stall).
	stallClock clock
	// notes is the store of the notes tools (Options.Notes).
	notes notes
	// startClock starts at the first initialize or server/discover (Options.SlowInitialize).
	startClock clock
}

// NewBackend returns a Backend configured by opts (nil means defaults). It panics on invalid
// options, as a test helper should; [RunCommand] validates flags before calling it.
func NewBackend(opts *Options) *Backend {
	b, err := newBackend(opts)
	if err != nil {
		panic(err)
	}
	return b
}

func newBackend(opts *Options) (*Backend, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	b := &Backend{opts: o, log: o.Logger, stateKey: make([]byte, 32)}
	switch {
	case o.Workers > 0:
		b.workers = make(chan struct{}, o.Workers)
	case o.Serialize:
		b.workers = make(chan struct{}, 1)
	}
	if b.log == nil {
		b.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	_, _ = rand.Read(b.stateKey)
	b.ctx, b.cancel = context.WithCancel(context.Background())
	b.root = &faultHandler{b: b, next: &dispatcher{b: b}}
	b.wrapSloppy()
	return b, nil
}

// Close ends every call the Backend is holding (hung calls, slow calls, open streams, the jobs
// of tasks). It waits for the jobs of tasks, which end at once, up to closeWait; the transports
// that own the connections wait for the rest.
func (b *Backend) Close() {
	b.cancel()
	done := make(chan struct{})
	go func() { b.jobs.Wait(); close(done) }()
	t := time.NewTimer(closeWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		b.log.Error("mcptest: task jobs still running after close")
	}
}

// Stats returns a snapshot of the counters.
func (b *Backend) Stats() Stats {
	return Stats{
		Requests:    b.requests.Load(),
		ToolCalls:   b.toolCalls.Load(),
		InFlight:    b.inFlight.Load(),
		MaxInFlight: b.maxInFlight.Load(),
		Crashes:     b.crashes.Load(),
		Malformed:   b.malformed.Load(),
		LeakedBytes: b.leaked.Load(),
		Sessions:    b.sessions.Load(),
		Resumes:     b.resumes.Load(),
	}
}

// admit counts a request on arrival and numbers tools/calls in arrival order. Transports
// that read frames sequentially call it before handing the request to its own goroutine, so
// "the first tools/call" means the first on the wire.
func (b *Backend) admit(req *request) {
	if req.isNotification() || req.seq != 0 {
		return
	}
	b.requests.Add(1)
	if req.Method == "tools/call" {
		req.seq = b.toolCalls.Add(1)
	} else {
		req.seq = -1
	}
}

// handle is the entry point every transport calls for one request or notification.
func (b *Backend) handle(ctx context.Context, p peer, req *request) *response {
	b.admit(req)
	return b.root.handle(ctx, p, req)
}

// dispatcher is the well-behaved server: era rules, then one method handler per method.
type dispatcher struct{ b *Backend }

// call is one request on its way through a method handler.
type call struct {
	ctx       context.Context
	peer      peer
	req       *request
	stateless bool
}

// removedInStateless lists legacy methods the stateless era does not have.
var removedInStateless = []string{"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}

func (d *dispatcher) handle(ctx context.Context, p peer, req *request) *response {
	if req.isNotification() {
		d.notification(p, req)
		return nil
	}
	stateless, rerr := d.classify(p, req)
	if rerr != nil {
		return errorResponse(req, rerr)
	}
	c := &call{ctx: ctx, peer: p, req: req, stateless: stateless}
	result, rerr := d.route(c)
	if rerr != nil {
		return errorResponse(req, rerr)
	}
	if stateless {
		markComplete(result)
	}
	return resultResponse(req, result)
}

func (d *dispatcher) notification(p peer, req *request) {
	// notifications/cancelled is acted on by the transport (it owns the in-flight contexts);
	// notifications/initialized needs nothing: initialize already marked the session.
	d.b.log.Debug("notification", "method", req.Method)
}

// classify decides the request's era and rejects what the configured era does not allow.
func (d *dispatcher) classify(p peer, req *request) (stateless bool, _ *rpcError) {
	era := d.b.opts.Era
	meta := metaOf(req.Params)
	switch {
	case req.Method == "server/discover":
		if era == EraLegacy {
			return false, newError(CodeMethodNotFound, "method not found: server/discover (this server speaks the legacy era only)")
		}
		if meta.ProtocolVersion != nil && !slices.Contains(StatelessVersions(), *meta.ProtocolVersion) {
			return true, unsupportedVersion(*meta.ProtocolVersion)
		}
		return true, nil
	case req.Method == "initialize" && era == EraStateless:
		return false, newError(CodeMethodNotFound, "method not found: initialize (this server speaks the stateless era only)")
	case meta.ProtocolVersion != nil && era != EraLegacy:
		if !slices.Contains(StatelessVersions(), *meta.ProtocolVersion) {
			return true, unsupportedVersion(*meta.ProtocolVersion)
		}
		if slices.Contains(removedInStateless, req.Method) {
			return true, newError(CodeMethodNotFound, "method not found: %s is not part of protocol version %s", req.Method, StatelessVersion)
		}
		return true, nil
	case era == EraStateless:
		if slices.Contains(removedInStateless, req.Method) {
			return true, newError(CodeMethodNotFound, "method not found: %s is not part of protocol version %s", req.Method, StatelessVersion)
		}
		return true, missingMeta()
	case era == EraBoth && req.Method != "initialize" && req.Method != "ping" && !p.session().isInitialized():
		return true, missingMeta()
	}
	return false, nil
}

func missingMeta() *rpcError {
	return newError(CodeInvalidParams, "missing params._meta[%q]: send initialize first or carry the protocol version on every request", MetaProtocolVersion)
}

func unsupportedVersion(requested string) *rpcError {
	return &rpcError{
		Code:    CodeUnsupportedVersion,
		Message: "unsupported protocol version " + requested,
		Data:    map[string]any{"supported": StatelessVersions(), "requested": requested},
	}
}

// route runs the method handler.
func (d *dispatcher) route(c *call) (any, *rpcError) {
	b := d.b
	switch c.req.Method {
	case "initialize":
		return b.initialize(c)
	case "server/discover":
		return b.discover(), nil
	case "ping":
		return map[string]any{}, nil
	case "tools/list":
		return b.listTools(c)
	case "tools/call":
		return b.callTool(c)
	case "resources/list":
		return b.listResources(c)
	case "resources/templates/list":
		return b.listTemplates(c)
	case "resources/read":
		return b.readResource(c)
	case "resources/subscribe":
		return b.subscribe(c)
	case "resources/unsubscribe":
		return map[string]any{}, nil
	case "prompts/list":
		return b.listPrompts(c)
	case "prompts/get":
		return b.getPrompt(c)
	case "completion/complete":
		return b.complete(c)
	case "logging/setLevel":
		return b.setLevel(c)
	case "tasks/get":
		return b.getTask(c)
	case "tasks/result":
		return b.taskResult(c)
	case "tasks/list":
		return b.listTasks(c)
	case "tasks/cancel":
		return b.cancelTask(c)
	}
	return nil, newError(CodeMethodNotFound, "method not found: %s", c.req.Method)
}

func serverInfo() map[string]any {
	return map[string]any{"name": "mcptest", "title": "mcpspec reference server", "version": "1.0.0"}
}

func (b *Backend) capabilities(stateless bool) map[string]any {
	caps := map[string]any{
		"tools":       map[string]any{"listChanged": false},
		"prompts":     map[string]any{"listChanged": false},
		"completions": map[string]any{},
	}
	if stateless {
		caps["resources"] = map[string]any{"listChanged": false}
	} else {
		caps["resources"] = map[string]any{"subscribe": true, "listChanged": false}
		caps["logging"] = map[string]any{}
	}
	return caps
}

const instructions = "mcptest is mcpspec's reference server: tools echo, add, slow, error, flaky (and confirm in the stateless era; ask and roots in the legacy era)."

func (b *Backend) initialize(c *call) (any, *rpcError) {
	var p struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
	}
	if err := unmarshalParams(c.req.Params, &p); err != nil {
		return nil, err
	}
	c.peer.session().setClientCapabilities(p.Capabilities)
	version := LatestLegacyVersion
	if slices.Contains(LegacyVersions(), p.ProtocolVersion) {
		version = p.ProtocolVersion
	}
	c.peer.session().setInitialized(version)
	caps := b.capabilities(false)
	if b.opts.Tasks && version == LatestLegacyVersion {
		caps["tasks"] = tasksCapability()
	}
	return map[string]any{
		"protocolVersion": version,
		"capabilities":    caps,
		"serverInfo":      serverInfo(),
		"instructions":    instructions,
	}, nil
}

func (b *Backend) discover() map[string]any {
	versions := StatelessVersions()
	if b.opts.Era == EraBoth {
		versions = append(versions, LegacyVersions()...)
	}
	return map[string]any{
		"supportedVersions": versions,
		"capabilities":      b.capabilities(true),
		"serverInfo":        serverInfo(),
		"instructions":      instructions,
	}
}

var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

func (b *Backend) setLevel(c *call) (any, *rpcError) {
	var p struct {
		Level string `json:"level"`
	}
	if err := unmarshalParams(c.req.Params, &p); err != nil {
		return nil, err
	}
	if !slices.Contains(logLevels, p.Level) {
		return nil, newError(CodeInvalidParams, "invalid log level %q", p.Level)
	}
	c.peer.session().setLogLevel(p.Level)
	_ = c.peer.notify(c.ctx, "notifications/message", map[string]any{
		"level": p.Level, "logger": "mcptest", "data": "log level set to " + p.Level,
	})
	return map[string]any{}, nil
}

// markComplete adds resultType "complete" to a stateless-era result that has none.
func markComplete(result any) {
	switch r := result.(type) {
	case map[string]any:
		if _, ok := r["resultType"]; !ok {
			r["resultType"] = "complete"
		}
	case *toolResult:
		if r.ResultType == "" {
			r.ResultType = "complete"
		}
	}
}

// unmarshalParams decodes params into v; absent params leave v zero.
func unmarshalParams(params json.RawMessage, v any) *rpcError {
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	if err := json.Unmarshal(params, v); err != nil {
		return newError(CodeInvalidParams, "invalid params: %v", err)
	}
	return nil
}

// slot returns the session's tools/call slot (Options.SerializeSession).
func (s *sessionState) slot() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.callSlot == nil {
		s.callSlot = make(chan struct{}, 1)
	}
	return s.callSlot
}
