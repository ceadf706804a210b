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
	"sync/atomic"
	"time"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport"
)

// conn is one open session of a pool, with where its server's stderr goes.
type conn struct {
	s          *session.Session
	stderrPath string
	proc       transport.Process // nil when the transport runs no process
	findings   *findingLog
}

// pool holds the sessions of one server of one collection: at most max open at once, opened
// lazily, reused by later tests. A failure to connect is sticky: every later test of the server
// gets the same error instead of starting the server again.
type pool struct {
	cr   *colRun
	name string
	def  *collection.Server
	vars *collection.Vars
	max  int

	mu        sync.Mutex // guards the fields below
	idle      []*conn
	all       []*conn // every session opened and not yet closed
	opened    int     // sessions opened so far, for stderr file names
	failed    *result.Error
	connected bool          // at least one session opened
	recorded  chan struct{} // closed once the first session recorded the server and tools
	tools     map[string]json.RawMessage
	// negotiated is the version the first session settled on; later sessions pin it instead of
	// detecting the era again (a legacy server that ignores server/discover costs a probe timeout).
	negotiated string
	// firstOpen is closed once the first session's open ended (either way); later sessions wait
	// for it so they can pin negotiated instead of all probing the era at once.
	firstOpen chan struct{}
}

// version is the protocol version a new session pins: the collection's, else the run's, else
// what the first session negotiated ("" for the first: detect).
func (p *pool) version(srv *collection.Server) string {
	if srv.ProtocolVersion != "" {
		return srv.ProtocolVersion
	}
	if v := p.cr.r.opts.ProtocolVersion; v != "" {
		return v
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.negotiated
}

// acquire returns a session for one test: an idle one, or a new one. The caller runs at most one
// test per session, and the scheduler never runs more tests than max, so no caller waits.
func (p *pool) acquire(ctx context.Context) (*conn, *result.Error) {
	p.mu.Lock()
	if p.failed != nil {
		f := *p.failed
		p.mu.Unlock()
		return nil, &f
	}
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return c, nil
	}
	p.opened++
	k := p.opened
	p.mu.Unlock()

	c, rerr := p.open(ctx, k)
	p.mu.Lock()
	defer p.mu.Unlock()
	if rerr != nil {
		if ctx.Err() == nil && p.failed == nil {
			p.failed = rerr
		}
		return nil, rerr
	}
	p.all = append(p.all, c)
	return c, nil
}

// release returns a session to the pool, or closes it when broken (the server crashed or the
// connection is gone): the next test opens a fresh one.
func (p *pool) release(c *conn, broken bool) {
	if broken {
		p.mu.Lock()
		for i, x := range p.all {
			if x == c {
				p.all = append(p.all[:i], p.all[i+1:]...)
				break
			}
		}
		p.mu.Unlock()
		_ = c.s.Close()
		return
	}
	p.mu.Lock()
	p.idle = append(p.idle, c)
	p.mu.Unlock()
}

// outputSchema returns the advertised outputSchema of a tool, if the server listed one.
func (p *pool) outputSchema(tool string) json.RawMessage {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tools[tool]
}

// closeAll closes every session concurrently and waits (each Close is bounded by its transport).
func (p *pool) closeAll() {
	p.mu.Lock()
	all := p.all
	p.all, p.idle = nil, nil
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.s.Close()
		}()
	}
	wg.Wait()
}

var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// open starts session number k of the server: dial, handshake, and for the first session the
// server record and the tools/list snapshot.
func (p *pool) open(ctx context.Context, k int) (*conn, *result.Error) {
	if k == 1 {
		defer close(p.firstOpen)
	} else {
		select {
		case <-p.firstOpen:
			p.mu.Lock()
			failed := p.failed
			p.mu.Unlock()
			if failed != nil {
				f := *failed
				return nil, &f
			}
		case <-ctx.Done():
			return nil, &result.Error{Category: string(session.Cancelled), Message: "interrupted before connecting"}
		}
	}
	srv, err := expandServer(p.def, p.vars)
	if err != nil {
		return nil, &result.Error{Message: p.mask(err.Error()), Hint: "define the variable with --var, --env-file or the collection's variables"}
	}
	target, _ := ServerSpec(srv)
	stderrPath := ""
	if p.cr.r.opts.StderrDir != "" && (srv.Transport == collection.TransportStdio || srv.Transport == collection.TransportTestServer) {
		stem := strings.TrimSuffix(filepath.Base(p.cr.col.File), filepath.Ext(p.cr.col.File))
		if stem == "" || stem == "." {
			stem = "collection"
		}
		file := fmt.Sprintf("%s-%s-%d.stderr.log", stem, p.name, k)
		stderrPath = filepath.Join(p.cr.r.opts.StderrDir, unsafeFileChars.ReplaceAllString(file, "-"))
	}
	baseDir := ""
	if p.cr.col.File != "" {
		baseDir = filepath.Dir(p.cr.col.File)
	}
	d, err := p.cr.r.opts.Dial(srv, stderrPath, baseDir)
	if err != nil {
		return nil, &result.Error{Category: "", Message: p.mask(err.Error()), Hint: p.mask(configHint(err))}
	}
	so := &session.Options{
		RequestTimeout:  orDefault(srv.Timeouts.Call, p.cr.r.opts.CallTimeout),
		ConnectTimeout:  orDefault(srv.Timeouts.Connect, p.cr.r.opts.ConnectTimeout),
		ProtocolVersion: p.version(srv),
	}
	if err := p.cr.r.wait(ctx); err != nil {
		return nil, &result.Error{Category: string(session.Cancelled), Message: "interrupted before connecting"}
	}
	// The test's deadline bounds the handshake too: name the limit that applied.
	limit, byTest := so.ConnectTimeout, false
	if dl, ok := ctx.Deadline(); ok {
		if rem := time.Until(dl); rem < limit {
			limit, byTest = (rem + 99*time.Millisecond).Truncate(100*time.Millisecond), true
		}
	}
	// The first malformed frame often explains a failed handshake (logging on stdout).
	var firstBad atomic.Pointer[session.Finding]
	findings := p.cr.findings.open(p.name)
	so.OnFinding = func(f session.Finding) {
		findings.add(f)
		if f.Category == session.Malformed {
			firstBad.CompareAndSwap(nil, &f)
		}
	}
	s, err := session.Open(ctx, d, so)
	if err != nil {
		e := describeConnect(err, srv, target, limit)
		var bad []byte
		if f := firstBad.Load(); f != nil {
			bad = f.Frame
		} else if se := (*session.Error)(nil); errors.As(err, &se) && se.Category == session.Malformed {
			bad = se.Frame // routed to the handshake's request (an HTTP answer), so no finding
		}
		if len(bad) > 0 && e.Category != string(session.Cancelled) {
			quoted := strings.Join(strings.Fields(transport.Excerpt(bad, 120)), " ")
			if e.Category == string(session.Malformed) {
				// The failure is that frame: quote it once, in the message.
				e.Message += ": " + quoted
			} else {
				e.Hint = joinHints(malformedNote(isStdio(srv), quoted), e.Hint)
			}
		}
		if byTest && e.Category == string(session.Timeout) {
			e.Message += " (what remained of the test's timeout; timeouts.connect is " + so.ConnectTimeout.String() + ")"
			e.Hint = "raise the test's timeout (or defaults.timeout) above the server's start-up time, or find out why the server is slow to start or silent on this transport"
		}
		maskError(e, p.mask)
		return nil, e
	}
	c := &conn{s: s, stderrPath: stderrPath, findings: findings}
	if proc, ok := s.Conn().(transport.Process); ok {
		c.proc = proc
		if sp := proc.StderrPath(); sp != "" {
			c.stderrPath = sp
		}
	}
	// The first session records the server and its tools; a session opened meanwhile waits
	// for that, so every test sees the tools' output schemas.
	p.mu.Lock()
	first := !p.connected
	if first {
		p.connected = true
		p.negotiated = s.ProtocolVersion()
		p.recorded = make(chan struct{})
	}
	recorded := p.recorded
	p.mu.Unlock()
	if first {
		p.record(ctx, c, srv, target)
		close(recorded)
	} else {
		select {
		case <-recorded:
		case <-ctx.Done():
		}
	}
	return c, nil
}

// record fills the collection's server entry and tools snapshot from the first session.
func (p *pool) record(ctx context.Context, c *conn, srv *collection.Server, target string) {
	info := c.s.ServerInfo()
	rs := result.Server{
		Name:            p.name,
		Transport:       srv.Transport,
		Target:          p.mask(target),
		ProtocolVersion: c.s.ProtocolVersion(),
		ServerName:      p.mask(info.Name),
		ServerVersion:   p.mask(info.Version),
		StderrPath:      c.stderrPath,
	}
	var tools []result.Tool
	schemas := map[string]json.RawMessage{}
	lctx, cancel := context.WithTimeout(ctx, orDefault(srv.Timeouts.Call, p.cr.r.opts.CallTimeout))
	list, err := c.s.ListTools(lctx)
	cancel()
	if err == nil {
		for _, t := range list {
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
