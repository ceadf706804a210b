package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/mcpspec/mcpspec/session/transport"
)

// This file detects the protocol era and performs the handshake: server/discover for the
// stateless era (2026-07-28), initialize + notifications/initialized for the legacy era.

// isStateless reports whether version v belongs to the stateless era.
func isStateless(v string) bool { return v >= Version20260728 }

// legacyVersions are the versions the client accepts from initialize.
func legacyVersions() []string {
	return slices.DeleteFunc(SupportedVersions(), isStateless)
}

// pick returns the newest version the client speaks among offered that satisfies keep.
func pick(offered []string, keep func(string) bool) string {
	for _, v := range SupportedVersions() {
		if keep(v) && slices.Contains(offered, v) {
			return v
		}
	}
	return ""
}

// capabilities encodes the client capabilities, declaring only what the client implements.
func (s *Session) capabilities() []byte {
	b := []byte{'{'}
	add := func(m string) {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, m...)
	}
	if s.opts.Roots != nil || s.opts.Declare.Roots {
		add(`"roots":{}`)
	}
	if s.opts.SamplingReply != nil || s.opts.Declare.Sampling {
		add(`"sampling":{}`)
	}
	if s.opts.ElicitationReply != nil || s.opts.Declare.Elicitation {
		add(`"elicitation":{}`)
	}
	return append(b, '}')
}

// metaFor encodes the stateless `_meta` members for version v.
func (s *Session) metaFor(v string) []byte {
	info, _ := json.Marshal(s.opts.ClientInfo)
	b := []byte(`"io.modelcontextprotocol/protocolVersion":`)
	b = appendString(b, v)
	b = append(b, `,"io.modelcontextprotocol/clientCapabilities":`...)
	b = append(b, s.caps...)
	b = append(b, `,"io.modelcontextprotocol/clientInfo":`...)
	return append(b, info...)
}

// handshake detects the era (or follows the pinned version) and performs the handshake.
//
// Era detection sends server/discover and waits a short probe window for it. A server that
// answers within the window decides alone: a stateless version means the stateless era (no
// initialize is sent), an error means legacy and initialize follows. A server that is silent
// through the window may be a legacy server that ignores discover, or any server that is slow
// to start (a stdio process still importing its libraries): initialize is sent then while the
// discover stays pending, and whichever request decides first wins (see [Session.race]), both
// bounded by ConnectTimeout.
func (s *Session) handshake(ctx context.Context) error {
	if v := s.opts.ProtocolVersion; v != "" {
		if !isStateless(v) {
			return s.initialize(ctx, v)
		}
		return s.pinStateless(ctx, v)
	}
	probe := s.opts.probe
	if probe <= 0 {
		probe = min(s.opts.ConnectTimeout/3, 2*time.Second)
	}
	dctx, stopDiscover := context.WithCancel(ctx)
	defer stopDiscover()
	var discoverID atomic.Int64
	verdicts := make(chan detection, 1)
	go func() { verdicts <- s.detect(dctx, &discoverID) }()
	window := time.NewTimer(probe)
	defer window.Stop()
	select {
	case d := <-verdicts:
		if d.err != nil {
			return d.err
		}
		if d.stateless != "" {
			s.setStateless(d.stateless, d.res)
			return nil
		}
		s.tellVersion("") // initialize goes without a version header
		return s.initialize(ctx, d.legacy)
	case <-window.C:
		return s.race(ctx, verdicts, stopDiscover, &discoverID)
	}
}

// pinStateless follows a pinned stateless version v: server/discover, which every server of
// that era implements (MCP 2026-07-28, Lifecycle), must answer and list v. A server that does
// not speak v fails the handshake with what it offers instead: the versions a -32022 or the
// discover result lists, or, for a server that rejects discover outright (a handshake-era
// server answers -32601), the version an initialize then negotiates.
func (s *Session) pinStateless(ctx context.Context, v string) error {
	s.setStateless(v, nil)
	res, _, e := s.discover(ctx, v, s.opts.handshakeLimit(), nil)
	if e == nil {
		if len(res.SupportedVersions) > 0 && !slices.Contains(res.SupportedVersions, v) {
			return notSpoken(v, "server/discover lists "+joinVersions(res.SupportedVersions), res.SupportedVersions)
		}
		s.setStateless(v, res)
		return nil
	}
	switch {
	case e.Category == Crash || e.Category == Disconnected || e.Category == Cancelled:
		return e
	case e.Code == -32022:
		var data struct {
			Supported []string `json:"supported"`
		}
		_ = json.Unmarshal(e.Data, &data)
		return notSpoken(v, "it answered server/discover with -32022 (unsupported protocol version)", data.Supported)
	case e.Category == Timeout || e.Category == Hang || e.Category == Deadlock:
		e.Message = "no answer to server/discover, which every " + v + " server implements"
		e.Hint = "the server may not speak " + v + ": drop the pinned version to let mcpspec detect the era, or pin a handshake-era version such as " + Version20251125
		return e
	}
	// Ask the handshake era what the server speaks: it answers initialize with its version.
	why := "it answered server/discover with " + describeRejection(e)
	s.tellVersion("")
	res2, _, ie := s.initRequest(ctx, Version20251125, nil)
	if ie != nil || res2 == nil {
		return notSpoken(v, why, nil)
	}
	return notSpoken(v, why+", and initialize with "+res2.ProtocolVersion+" (the handshake era)", []string{res2.ProtocolVersion})
}

// notSpoken is the failure of a handshake pinned to version v that the server does not speak.
func notSpoken(v, why string, offered []string) *Error {
	e := &Error{Category: ProtocolError, Method: "server/discover",
		Message: "the server does not speak protocol version " + v + ": " + why}
	if len(offered) > 0 {
		e.Message += "; it offers " + joinVersions(offered)
		e.Hint = "pin one it offers (e.g. --protocol-version " + offered[0] + "), or drop the pinned version to let mcpspec negotiate"
	} else {
		e.Hint = "drop the pinned version to let mcpspec detect the era and negotiate"
	}
	return e
}

// describeRejection renders a failed request's JSON-RPC error or HTTP status for a message.
func describeRejection(e *Error) string {
	var st *transport.StatusError
	switch {
	case e.Code != 0:
		return fmt.Sprintf("JSON-RPC error %d (%s)", e.Code, e.Message)
	case errors.As(e, &st):
		return fmt.Sprintf("HTTP %d", st.Status)
	case e.Message != "":
		return e.Message
	}
	return string(e.Category)
}

// awaitVerdict waits up to grace (and ctx) for era detection's verdict; nil when none came.
func awaitVerdict(ctx context.Context, verdicts <-chan detection, grace time.Duration) *detection {
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case x := <-verdicts:
		return &x
	case <-t.C:
	case <-ctx.Done():
	}
	return nil
}

// detection is what server/discover said about the era.
type detection struct {
	// stateless is the stateless version to use, or "" for the legacy era.
	stateless string
	// res is the discover result (nil when an error such as -32021 revealed the era).
	res *discoverResult
	// legacy is the version to offer initialize in the legacy era.
	legacy string
	// at is when the deciding answer arrived.
	at time.Time
	// err, when set, is fatal: the connection ended.
	err *Error
}

// detect sends server/discover (again with another stateless version after a -32022 listing
// one) and reads the era from the answer; no answer at all by the deadline means legacy. ids
// receives each discover's request id. A late answer after ctx is cancelled is not a finding.
func (s *Session) detect(ctx context.Context, ids *atomic.Int64) detection {
	d := detection{legacy: Version20251125}
	v := Version20260728
	for range 2 {
		res, at, e := s.discover(ctx, v, s.opts.handshakeLimit(), ids)
		d.at = at
		if e == nil {
			if sv := pick(res.SupportedVersions, isStateless); sv != "" {
				d.stateless, d.res = sv, res
				return d
			}
			if lv := pick(res.SupportedVersions, func(x string) bool { return !isStateless(x) }); lv != "" {
				d.legacy = lv
			}
			return d
		}
		if e.Category == Crash || e.Category == Disconnected {
			e.Hint = joinHint(e.Hint, "the connection ended on server/discover (era detection): pin a legacy version, e.g. --protocol-version "+Version20251125+", to skip it")
			d.err = e
			return d
		}
		if e.Code == -32020 || e.Code == -32021 {
			// Header mismatch or missing capability: only a stateless-era server says that.
			d.stateless = v
			return d
		}
		if e.Code != -32022 {
			return d // any other error or no answer: a legacy server
		}
		var data struct {
			Supported []string `json:"supported"`
		}
		_ = json.Unmarshal(e.Data, &data)
		if sv := pick(data.Supported, isStateless); sv != "" && sv != v {
			v = sv
			continue
		}
		if lv := pick(data.Supported, func(x string) bool { return !isStateless(x) }); lv != "" {
			d.legacy = lv
		}
		return d
	}
	return d
}

// initAnswer is the outcome of an initialize request.
type initAnswer struct {
	res *initializeResult
	at  time.Time
	err *Error
}

// race runs initialize alongside a server/discover that outlived the probe window:
//   - discover offers a stateless version → the stateless era, even when initialize succeeded
//     first (a server of both eras gets the newer one whatever the order of its answers);
//   - initialize succeeds and discover stays unanswered for as long again as initialize took
//     (100ms…2s) or says legacy → the legacy era;
//   - discover says legacy (an error, or no answer by the deadline) → initialize's outcome;
//   - initialize is rejected as a stateless-only server would reject it (-32601 method not
//     found, or -32020/-32021/-32022) → wait for the discover, probably from a slow server.
//
// The losing request is given up quietly: its late answer is expected, not a finding. When
// the stateless era wins after initialize was sent, an HTTP connection may hold a stray legacy
// session id from initialize: it is reset so that no later request carries it. Both goroutines
// are awaited before race returns.
func (s *Session) race(ctx context.Context, verdicts <-chan detection, stopDiscover context.CancelFunc, discoverID *atomic.Int64) error {
	ictx, stopInit := context.WithCancel(ctx)
	defer stopInit()
	s.tellVersion("") // initialize goes without a version header
	raceStart := time.Now()
	var initID atomic.Int64
	answers := make(chan initAnswer, 1)
	go func() {
		res, at, e := s.initRequest(ictx, Version20251125, &initID)
		answers <- initAnswer{res, at, e}
	}()
	var (
		d  *detection
		in *initAnswer
	)
	// settle stops and awaits whichever request is still running.
	settle := func() {
		stopDiscover()
		stopInit()
		if d == nil {
			<-verdicts
		}
		if in == nil {
			<-answers
		}
	}
	for {
		select {
		case x := <-verdicts:
			d = &x
		case x := <-answers:
			in = &x
		}
		// Two answers read back to back reach this loop in either order: when the other
		// request is answered too, wait for it and decide on both arrival times.
		if (d == nil && !s.awaiting(discoverID.Load())) || (in == nil && !s.awaiting(initID.Load())) {
			continue
		}
		if in != nil && in.err == nil && d == nil {
			// initialize succeeded while discover, sent first, is still out: a server of both
			// eras on a busy machine may answer in either order. Give discover as long again as
			// initialize took (100ms…2s), so such a server gets the same era every time.
			d = awaitVerdict(ctx, verdicts, min(max(in.at.Sub(raceStart), 100*time.Millisecond), 2*time.Second))
		}
		switch {
		case d != nil && d.err != nil:
			settle()
			return d.err
		case d != nil && d.stateless != "":
			settle()
			if sc, ok := s.conn.(transport.Sessioned); ok {
				sc.ResetSession() // drop a legacy session initialize may have opened (HTTP)
			}
			s.setStateless(d.stateless, d.res)
			return nil
		case in != nil && in.err == nil:
			settle()
			return s.adoptInit(ctx, in.res)
		case in != nil && d == nil && statelessRejection(in.err):
			continue // a stateless-only server, slow to answer discover: wait for it
		case in != nil:
			settle()
			return in.err
		}
		// d says legacy: wait for initialize.
	}
}

// awaiting reports whether request id (0: not yet sent) still awaits its answer.
func (s *Session) awaiting(id int64) bool {
	if id == 0 {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.sh.pending[id]
	return ok
}

// statelessRejection reports whether e is how a stateless-only server answers initialize.
func statelessRejection(e *Error) bool {
	switch e.Code {
	case -32601, -32020, -32021, -32022:
		return true
	}
	return false
}

// tellVersion passes v to a connection that carries the version outside the frames.
func (s *Session) tellVersion(v string) {
	if vc, ok := s.conn.(transport.Versioned); ok {
		vc.SetProtocolVersion(v)
	}
}

// discoverResult is the result of server/discover.
type discoverResult struct {
	SupportedVersions []string        `json:"supportedVersions"`
	Capabilities      json.RawMessage `json:"capabilities"`
	Instructions      string          `json:"instructions"`
	ServerInfo        *Implementation `json:"serverInfo"`
	Meta              struct {
		ServerInfo *Implementation `json:"io.modelcontextprotocol/serverInfo"`
	} `json:"_meta"`
}

// discover sends server/discover for version v with the given timeout and returns the result
// and when it arrived. HTTP carries the version in a header too, so the connection learns v
// first. ids, when set, receives the request id, and a late answer after ctx ends is expected
// (era detection), not a finding.
func (s *Session) discover(ctx context.Context, v string, timeout time.Duration, ids *atomic.Int64) (*discoverResult, time.Time, *Error) {
	s.tellVersion(v)
	params := []byte(`{"_meta":{`)
	params = append(params, s.metaFor(v)...)
	params = append(params, "}}"...)
	resp, e := s.do(ctx, &request{method: "server/discover", params: params, plain: true, timeout: timeout,
		noHang: true, noCancel: true, noMeta: true, noRetry: true, quiet: ids != nil, ids: ids})
	if e != nil {
		return nil, time.Now(), e
	}
	var res discoverResult
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		return nil, resp.Timing.Received, &Error{Category: ProtocolError, Method: "server/discover", ID: resp.ID,
			Message: "the discover result does not decode: " + err.Error(), Frame: excerpt(resp.Result)}
	}
	return &res, resp.Timing.Received, nil
}

// setStateless switches the session to the stateless era with version v.
func (s *Session) setStateless(v string, res *discoverResult) {
	s.mu.Lock()
	n := *s.state.Load()
	n.era, n.version, n.meta = EraStateless, v, s.metaFor(v)
	if res != nil {
		n.serverCaps, n.instructions = res.Capabilities, res.Instructions
		if res.Meta.ServerInfo != nil {
			n.serverInfo = *res.Meta.ServerInfo
		} else if res.ServerInfo != nil {
			n.serverInfo = *res.ServerInfo
		}
	}
	s.state.Store(&n)
	s.mu.Unlock()
	s.tellVersion(v)
}

// adoptVersion switches to another stateless version listed in a -32022 error's data; it
// reports whether there was one to switch to.
func (s *Session) adoptVersion(data []byte) bool {
	var d struct {
		Supported []string `json:"supported"`
	}
	if json.Unmarshal(data, &d) != nil {
		return false
	}
	cur := s.ProtocolVersion()
	v := pick(d.Supported, func(x string) bool { return isStateless(x) && x != cur })
	if v == "" {
		return false
	}
	s.setStateless(v, nil)
	return true
}

// initializeResult is the result of initialize.
type initializeResult struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ServerInfo      Implementation  `json:"serverInfo"`
	Instructions    string          `json:"instructions"`
}

// initialize performs the legacy handshake offering version v.
func (s *Session) initialize(ctx context.Context, v string) error {
	res, _, e := s.initRequest(ctx, v, nil)
	if e != nil {
		return e
	}
	return s.adoptInit(ctx, res)
}

// initRequest sends initialize offering version v and checks the answer, without adopting it;
// it returns the result and when it arrived. ids, when set, receives the request id, and a
// late answer after ctx ends is expected (the era race), not a finding.
func (s *Session) initRequest(ctx context.Context, v string, ids *atomic.Int64) (*initializeResult, time.Time, *Error) {
	info, _ := json.Marshal(s.opts.ClientInfo)
	params := []byte(`{"protocolVersion":`)
	params = appendString(params, v)
	params = append(params, `,"capabilities":`...)
	params = append(params, s.caps...)
	params = append(params, `,"clientInfo":`...)
	params = append(params, info...)
	params = append(params, '}')
	resp, e := s.do(ctx, &request{method: "initialize", params: params, plain: true, timeout: s.opts.handshakeLimit(),
		noHang: true, noCancel: true, noMeta: true, noRetry: true, quiet: ids != nil, ids: ids})
	if e != nil {
		return nil, time.Now(), e
	}
	at := resp.Timing.Received
	var res initializeResult
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		return nil, at, &Error{Category: ProtocolError, Method: "initialize", ID: resp.ID,
			Message: "the initialize result does not decode: " + err.Error(), Frame: excerpt(resp.Result)}
	}
	if res.ProtocolVersion != v && !slices.Contains(legacyVersions(), res.ProtocolVersion) {
		if s.opts.AcceptAnyVersion {
			res.ProtocolVersion = v
			return &res, at, nil
		}
		hint := "pin a version the server supports with --protocol-version, or upgrade the server"
		if res.ProtocolVersion < Version20241105 {
			// Not a version of MCP at all: pinning another one will not help.
			hint = "this is no MCP protocol version (the first is " + Version20241105 + "), so pinning one will not help; " +
				"`mcpspec probe` records this handshake violation and runs its other rows"
		}
		return nil, at, &Error{Category: ProtocolError, Method: "initialize", ID: resp.ID, Frame: excerpt(resp.Result),
			Message: "the server chose protocol version " + transportQuote(res.ProtocolVersion) +
				", which this client does not speak (it speaks " + joinVersions(legacyVersions()) + ")",
			Hint: hint}
	}
	return &res, at, nil
}

// adoptInit switches the session to the legacy era initialize negotiated and sends
// notifications/initialized.
func (s *Session) adoptInit(ctx context.Context, res *initializeResult) error {
	s.mu.Lock()
	old := s.state.Load()
	s.state.Store(&negotiated{era: EraLegacy, version: res.ProtocolVersion, serverInfo: res.ServerInfo,
		serverCaps: res.Capabilities, instructions: res.Instructions, gen: old.gen + 1,
		toolTasks: declaresToolTasks(res.Capabilities)})
	s.mu.Unlock()
	s.tellVersion(res.ProtocolVersion)
	return s.notify(ctx, "notifications/initialized", nil)
}

// reinitialize re-runs initialize after the server forgot the session (HTTP 404), once per
// handshake generation however many calls noticed.
func (s *Session) reinitialize(ctx context.Context, gen uint64) error {
	s.reinitMu.Lock()
	defer s.reinitMu.Unlock()
	st := s.state.Load()
	cur, v := st.gen, st.version
	if cur != gen {
		return nil // another call already re-initialized
	}
	if sc, ok := s.conn.(transport.Sessioned); ok {
		sc.ResetSession()
	}
	return s.initialize(ctx, v)
}

func transportQuote(s string) string { return string(appendString(nil, s)) }

func joinVersions(vs []string) string {
	out := ""
	for i, v := range vs {
		if i > 0 {
			out += ", "
		}
		out += v
	}
	return out
}

func joinHint(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n" + b
}
