package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/spec"
	"github.com/mcpspec/mcpspec/session/transport/sse"
	"github.com/mcpspec/mcpspec/session/transport/stdio"
	"github.com/mcpspec/mcpspec/session/transport/streamable"
	"github.com/mcpspec/mcpspec/session/transport/tcp"
	"github.com/mcpspec/mcpspec/session/transport/ws"
)

// maxReopens bounds how often one era reopens the server after a row killed it.
const maxReopens = 5

// prober is one probe run: the options, the eras and the HTTP client.
type prober struct {
	o     *Options
	httpc *http.Client
	envs  []*Env
	// rows are the selected rows.
	rows []Row
	// sessions numbers the sessions of every opener, for their stderr files.
	sessions atomic.Int64
}

func newProber(o *Options) *prober {
	c := o.HTTPClient
	if c == nil {
		c = &http.Client{
			Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 4, IdleConnTimeout: 10 * time.Second},
			// A redirect is an answer too: rows look at statuses as the server sent them.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	return &prober{o: o, httpc: c}
}

func (p *prober) close() {
	for _, e := range p.envs {
		e.close()
	}
	p.httpc.CloseIdleConnections()
}

// eraPlan is one era to probe, at one version.
type eraPlan struct {
	era     session.Era
	version string
}

// plans lists the eras to probe: the pinned version's, or both.
func (p *prober) plans() []eraPlan {
	if v := p.o.Server.Session.ProtocolVersion; v != "" {
		if v >= session.Version20260728 {
			return []eraPlan{{session.EraStateless, v}}
		}
		return []eraPlan{{session.EraLegacy, v}}
	}
	return []eraPlan{{session.EraLegacy, session.Version20251125}, {session.EraStateless, session.Version20260728}}
}

// openEras opens each era's main session and records in rep which eras the server speaks. It
// fails when no era could be opened because the server could not be reached.
func (p *prober) openEras(ctx context.Context, rep *Report) ([]*Env, error) {
	var (
		envs    []*Env
		connErr error
	)
	for _, plan := range p.plans() {
		e, info, err := p.openEra(ctx, plan)
		if err != nil {
			info.Reason = "cannot connect: " + err.Error()
		}
		rep.Eras = append(rep.Eras, info)
		if err != nil {
			if connErr == nil {
				connErr = err
			}
			continue
		}
		if e != nil {
			envs = append(envs, e)
			p.envs = append(p.envs, e)
		}
	}
	if len(envs) == 0 {
		if connErr != nil {
			return nil, connErr
		}
		var why []string
		for _, i := range rep.Eras {
			why = append(why, fmt.Sprintf("%s: %s", i.Era, i.Reason))
		}
		return nil, &serverconn.Error{Category: session.ProtocolError, Op: "the handshake",
			Msg: "the server speaks neither protocol era (" + strings.Join(why, "; ") + ")"}
	}
	tr := transportOf(envs[0].conn.Conn())
	if tr == "" {
		tr = p.o.Server.Info.Transport
	}
	if tr == spec.SSE {
		// HTTP+SSE is the 2024-11-05 transport: it has no stateless era.
		envs = slices.DeleteFunc(envs, func(e *Env) bool {
			if e.Target.Era != session.EraStateless {
				return false
			}
			e.close()
			for i := range rep.Eras {
				if rep.Eras[i].Era == session.EraStateless {
					rep.Eras[i].Spoken, rep.Eras[i].Reason = false, "the HTTP+SSE transport (2024-11-05) has no stateless era"
				}
			}
			return true
		})
	}
	eras := make([]session.Era, len(envs))
	for i, e := range envs {
		eras[i] = e.Target.Era
	}
	rep.Transport = tr
	info := envs[0].conn.ServerInfo()
	rep.ServerInfo = &info
	for _, e := range envs {
		e.Target.Transport, e.Target.Eras, e.Target.Loopback = tr, eras, loopbackURL(p.o.Server.Info.URL)
	}
	return envs, nil
}

// openEra opens the main session of one era. A server that answers the era's handshake with
// an error does not speak the era (nil Env, nil error); a server that cannot be reached is an
// error.
func (p *prober) openEra(ctx context.Context, plan eraPlan) (*Env, EraInfo, error) {
	info := EraInfo{Era: plan.era, Version: plan.version}
	e := &Env{p: p, Version: plan.version, log: &eraLog{}, hub: newHub(), Target: Target{Era: plan.era}}
	e.op = e.opener(plan.version)
	frames, stop := e.hub.watch(func(transport.Frame) bool { return true })
	conn, err := e.op.Open(ctx)
	stop()
	for len(frames) > 0 {
		e.openFrames = append(e.openFrames, <-frames)
	}
	if err != nil {
		if refused(err) {
			info.Reason = "the handshake was refused: " + err.Error()
			return nil, info, nil
		}
		return nil, info, err
	}
	e.conn = conn
	if plan.era == session.EraStateless {
		if why := e.discover(ctx); why != "" {
			info.Reason = why
			_ = conn.Close()
			return nil, info, nil
		}
	} else {
		info.Version = conn.ProtocolVersion()
		e.Version = info.Version
	}
	info.Spoken = true
	return e, info, nil
}

// refused reports whether an open failed because the server answered the handshake with an
// error (it does not speak that era) rather than because it could not be reached.
func refused(err error) bool {
	var se *session.Error
	if !errors.As(err, &se) {
		return false
	}
	if se.Code != 0 {
		return true
	}
	var st *transport.StatusError
	if errors.As(err, &st) && st.Status >= 400 && st.Status < 500 {
		return true
	}
	return se.Category == session.ProtocolError
}

// opener returns a serverconn opener pinned at version whose sessions report to the era's hub,
// and log what they receive in the era's log.
func (e *Env) opener(version string) *serverconn.Opener {
	p, l, h := e.p, e.log, e.hub
	so := p.o.Server
	so.Session.ProtocolVersion = version
	// A server that answers initialize with a version that is none is a FAIL row
	// (lifecycle.initialize), not the end of the probe: take the version offered and go on.
	so.Session.AcceptAnyVersion = true
	if name := so.StderrFile; name != nil {
		// Each opener counts from 1: number the files across the probe's openers.
		so.StderrFile = func(int) string { return name(int(p.sessions.Add(1))) }
	}
	nextFrame := so.Session.OnFrame
	so.Session.OnFrame = func(dir session.Direction, f transport.Frame) {
		if dir == session.Received {
			l.received(f)
		}
		h.onFrame(dir, f)
		if nextFrame != nil {
			nextFrame(dir, f)
		}
	}
	return serverconn.New(so)
}

// discover checks that the stateless session speaks the era: server/discover must answer with
// a stateless version among supportedVersions. It returns why not, or "".
func (e *Env) discover(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, min(e.p.o.RowTimeout, 10*time.Second))
	defer cancel()
	resp, err := e.conn.Request(ctx, "server/discover", nil)
	if err != nil {
		return "server/discover failed: " + err.Error()
	}
	var d struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	if json.Unmarshal(resp.Result, &d) != nil {
		return "server/discover answered a result that does not decode: " + excerpt(resp.Result)
	}
	if !slices.ContainsFunc(d.SupportedVersions, func(v string) bool { return v >= session.Version20260728 }) {
		return fmt.Sprintf("server/discover lists no stateless version (supportedVersions %v)", d.SupportedVersions)
	}
	e.discovered = resp.Result
	return ""
}

// transportOf names the transport of a connection ("" when unknown).
func transportOf(c transport.Conn) spec.Transport {
	switch c.(type) {
	case *stdio.Conn:
		return spec.Stdio
	case *streamable.Conn:
		return spec.HTTP
	case *sse.Conn:
		return spec.SSE
	case *ws.Conn:
		return spec.WS
	case *tcp.Conn:
		return spec.TCP
	}
	return ""
}

// loopbackURL reports whether u names a loopback host.
func loopbackURL(u string) bool {
	pu, err := url.Parse(u)
	if err != nil || pu.Host == "" {
		return false
	}
	h := pu.Hostname()
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// Env is what a row runs against: one era of one server, its main session and helpers that
// send raw requests and record what happened.
type Env struct {
	// Target is the transport and era the row runs in.
	Target Target
	// Version is the era's protocol version.
	Version string

	p  *prober
	op *serverconn.Opener
	// hub sees the frames of the era's sessions: each era has its own, so that eras may run
	// side by side.
	hub  *hub
	conn *serverconn.Conn
	// broken is set when a request found the main session dead (crash, disconnect).
	broken  bool
	reopens int
	log     *eraLog
	// openFrames are the frames received while the main session was opened (the handshake).
	openFrames []transport.Frame
	// discovered is the stateless era's server/discover result.
	discovered json.RawMessage
	// early holds, by row id, the results of rows that ran alongside an earlier row of the
	// era (see [Env.willRun]); the row reports them when its turn comes.
	early map[string]early
}

// early is the result of a row that ran alongside another one: its outcome, its own evidence
// and how long it took.
type early struct {
	out      Outcome
	evidence []Evidence
	took     time.Duration
}

// willRun reports whether the row id is selected and applies in this era, so that a row may
// do its work alongside its own.
func (e *Env) willRun(id string) bool {
	i := slices.IndexFunc(e.p.rows, func(r Row) bool { return r.ID == id })
	if i < 0 {
		return false
	}
	if a := e.p.rows[i].Applies; a != nil {
		ok, _ := a(e.Target)
		return ok
	}
	return true
}

// runsEarly records the result of row id, which ran alongside the current row.
func (e *Env) runsEarly(id string, r early) {
	if e.early == nil {
		e.early = map[string]early{}
	}
	e.early[id] = r
}

func (e *Env) close() {
	if e.conn != nil {
		_ = e.conn.Close()
		e.conn = nil
	}
}

// session returns the main session, reopening it when a row left it dead.
func (e *Env) session(ctx context.Context) (*serverconn.Conn, error) {
	if e.conn != nil && !e.broken {
		return e.conn, nil
	}
	if e.reopens >= maxReopens {
		return nil, fmt.Errorf("the server died %d times during the probe; not reopened again", e.reopens)
	}
	e.reopens++
	if e.conn != nil {
		_ = e.conn.Close()
		e.conn = nil
	}
	c, err := e.op.Open(ctx)
	if err != nil {
		return nil, fmt.Errorf("reopen the server: %w", err)
	}
	e.conn, e.broken = c, false
	return c, nil
}

// note adds a line of evidence to the running row.
func (e *Env) note(format string, args ...any) {
	e.hub.note(dirNote, fmt.Sprintf(format, args...))
}
