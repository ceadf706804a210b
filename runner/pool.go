package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/mcpspec/mcpspec/assert/toolschema"
	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/internal/hint"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// conn is one open session of a pool.
type conn = serverconn.Conn

// pool holds the sessions of one server of one collection (a [serverconn.Pool]), built on the
// first test that needs it: the server's variables are expanded then. It records the server
// and its tools into the collection's result with the first session.
type pool struct {
	cr   *colRun
	name string
	def  *collection.Server
	vars *collection.Vars

	once sync.Once // builds sp or setupErr
	sp   *serverconn.Pool
	// connOpts are the options of sp's opener (the probe block opens sessions of its own).
	connOpts serverconn.Options
	srv      *collection.Server // def with its variables expanded
	// setupErr is a server definition that could not be expanded or resolved.
	setupErr *result.Error

	mu sync.Mutex // guards tools, listed, exercised and firstFailed
	// firstFailed names the test that met the server's remembered connect failure first; the
	// tests after it are not run and point at it.
	firstFailed string
	tools       map[string]json.RawMessage
	// listed is what the server advertised (recorded with the first session); exercised what
	// the collection sent requests for. Both feed the coverage.
	listed    advertised
	exercised exercised

	// contracts are the tools' schemas, for strict runs.
	contracts *toolschema.Tools
}

var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// setup expands the server's variables and builds its session pool.
func (p *pool) setup() {
	srv, err := expandServer(p.def, p.vars)
	if err != nil {
		p.setupErr = &result.Error{Message: p.mask(err.Error()), Hint: "define the variable with --var, --env-file or the collection's variables"}
		return
	}
	p.srv = srv
	target, so := ServerSpec(srv)
	info, err := spec.Resolve(target, so)
	if err != nil {
		info = spec.Info{Spec: target}
	}
	baseDir := ""
	if p.cr.col.File != "" {
		baseDir = filepath.Dir(p.cr.col.File)
	}
	opts := p.cr.r.opts
	o := serverconn.Options{
		Name: p.name,
		Info: info,
		Dial: func(stderrPath string) (transport.Dialer, error) {
			return opts.Dial(srv, stderrPath, baseDir)
		},
		Session: session.Options{
			RequestTimeout:  orDefault(srv.Timeouts.Call, opts.CallTimeout),
			ConnectTimeout:  orDefault(srv.Timeouts.Connect, opts.ConnectTimeout),
			ProtocolVersion: orString(srv.ProtocolVersion, opts.ProtocolVersion),
			// One session serves many tests: it declares every capability the collection
			// gives replies for, and each test's replies are set on its inbox.
			Declare: declared(p.cr.col),
			// Between tests (a request right after the handshake), the collection's rules.
			OnRequest: p.cr.replier(nil),
		},
		Wait:  p.cr.r.wait,
		Terms: serverconn.CollectionTerms(),
		Inbox: true,
	}
	if opts.StderrDir != "" && isStdio(srv) {
		stem := strings.TrimSuffix(filepath.Base(p.cr.col.File), filepath.Ext(p.cr.col.File))
		if stem == "" || stem == "." {
			stem = "collection"
		}
		o.StderrFile = func(n int) string {
			file := fmt.Sprintf("%s-%s-%d.stderr.log", stem, p.name, n)
			return filepath.Join(opts.StderrDir, unsafeFileChars.ReplaceAllString(file, "-"))
		}
	}
	p.connOpts = o
	p.sp = serverconn.NewPool(serverconn.New(o), p.record)
}

// acquire returns a session for one test: an idle one, or a new one. The caller runs at most one
// test per session, and the scheduler never runs more tests than --parallel, so no caller waits.
func (p *pool) acquire(ctx context.Context) (*conn, *result.Error) {
	p.once.Do(p.setup)
	if p.setupErr != nil {
		f := *p.setupErr
		return nil, &f
	}
	c, err := p.sp.Acquire(ctx)
	if err != nil {
		return nil, p.connectFailure(ctx, err)
	}
	return c, nil
}

// acquireFor is acquire for the test named test. When the server's connect failure was
// already reported by an earlier test, notRun says so in one line naming that test, and the
// caller reports this test as not run instead of repeating the error.
func (p *pool) acquireFor(ctx context.Context, test string) (c *conn, rerr *result.Error, notRun string) {
	c, rerr = p.acquire(ctx)
	if rerr == nil || ctx.Err() != nil || rerr.Category == session.Cancelled {
		return c, rerr, ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.firstFailed == "" || p.firstFailed == test {
		p.firstFailed = test
		return nil, rerr, ""
	}
	return nil, rerr, fmt.Sprintf("server %q could not be connected: see %q", p.name, p.firstFailed)
}

// connectFailure turns a failed open into the test's error.
func (p *pool) connectFailure(ctx context.Context, err error) *result.Error {
	e := &result.Error{Category: session.CategoryOf(err), Message: err.Error(), Hint: hint.Of(err)}
	var se *serverconn.Error
	if errors.As(err, &se) {
		e.Category, e.Code = se.Category, se.Code()
	}
	if errors.Is(ctx.Err(), context.Canceled) || e.Category == session.Cancelled {
		e.Category, e.Message, e.Hint = session.Cancelled, "interrupted while connecting", ""
	}
	if se != nil && se.Category == "" {
		e.Category = "" // the server definition is at fault
	}
	maskError(e, p.mask)
	return e
}

// release returns a session to the pool, or closes it when broken.
func (p *pool) release(c *conn, broken bool) { p.sp.Release(c, broken) }

// describeCall turns a failed request of session c into the test's error.
func describeCall(c *conn, err error, method string, limit time.Duration) *result.Error {
	se := c.Describe(err, method, limit)
	return &result.Error{Category: se.Category, Code: se.Code(), Message: se.Msg, Hint: se.Hint()}
}

// outputSchema returns the advertised outputSchema of a tool, if the server listed one.
func (p *pool) outputSchema(tool string) json.RawMessage {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tools[tool]
}

// closeAll closes every session and waits.
func (p *pool) closeAll() {
	if p.sp != nil {
		p.sp.Close()
	}
}

// state reports whether a test asked for the server, whether it connected, and why not.
func (p *pool) state() (used, connected bool, failed *result.Error) {
	if p.setupErr != nil {
		return true, false, p.setupErr
	}
	if p.sp == nil {
		return false, false, nil
	}
	used, connected, err := p.sp.State()
	if err != nil {
		failed = p.connectFailure(context.Background(), err)
	}
	return used, connected, failed
}

// record fills the collection's server entry and tools snapshot from the first session.
func (p *pool) record(ctx context.Context, c *conn) {
	srv := p.srv
	target, _ := ServerSpec(srv)
	info := c.ServerInfo()
	tr := srv.Transport
	if tr == collection.TransportHTTP && c.Transport == spec.SSE {
		tr = collection.TransportSSE // the legacy HTTP+SSE fallback
	}
	rs := result.Server{
		Name:            p.name,
		Transport:       tr,
		Target:          p.mask(target),
		ProtocolVersion: c.ProtocolVersion(),
		ServerName:      p.mask(info.Name),
		ServerVersion:   p.mask(info.Version),
		StderrPath:      c.StderrPath,
	}
	var tools []result.Tool
	schemas := map[string]json.RawMessage{}
	callTimeout := orDefault(srv.Timeouts.Call, p.cr.r.opts.CallTimeout)
	lctx, cancel := context.WithTimeout(ctx, callTimeout)
	list, err := c.ListTools(lctx)
	cancel()
	listed := listAdvertised(ctx, c.Session, callTimeout)
	if err == nil {
		listed.tools = make([]string, 0, len(list))
		for _, t := range list {
			listed.tools = append(listed.tools, t.Name)
			p.contracts.Set(t.Name, t.InputSchema, t.OutputSchema)
			tools = append(tools, result.Tool{
				Name:         t.Name,
				Description:  p.mask(t.Description),
				InputSchema:  maskRaw(t.InputSchema, p.mask),
				OutputSchema: maskRaw(t.OutputSchema, p.mask),
			})
			if len(t.OutputSchema) > 0 {
				schemas[t.Name] = t.OutputSchema
			}
		}
	}
	p.cr.mu.Lock()
	p.cr.rc.Servers = append(p.cr.rc.Servers, rs)
	if err == nil {
		if p.cr.rc.Tools == nil {
			p.cr.rc.Tools = map[string][]result.Tool{}
		}
		p.cr.rc.Tools[p.name] = tools
	}
	p.cr.mu.Unlock()
	p.mu.Lock()
	p.tools = schemas
	p.listed = listed
	p.mu.Unlock()
}

func (p *pool) mask(s string) string { return p.cr.mask(s) }

// orDefault returns d, or def when d is zero.
func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// orString returns s, or def when s is empty.
func orString(s, def string) string {
	if s != "" {
		return s
	}
	return def
}
