package session

import (
	"context"
	"encoding/json"
	"slices"
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
	if s.opts.Roots != nil {
		add(`"roots":{}`)
	}
	if s.opts.SamplingReply != nil {
		add(`"sampling":{}`)
	}
	if s.opts.ElicitationReply != nil {
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
func (s *Session) handshake(ctx context.Context) error {
	if v := s.opts.ProtocolVersion; v != "" {
		if !isStateless(v) {
			return s.initialize(ctx, v)
		}
		s.setStateless(v, nil)
		// Pinned: discover only to learn who the server is; its failure is not fatal.
		if res, e := s.discover(ctx, v, s.opts.ConnectTimeout); e == nil {
			s.setStateless(v, res)
		} else if e.Category == Crash || e.Category == Disconnected {
			return e
		}
		return nil
	}
	probe := min(s.opts.ConnectTimeout/3, 2*time.Second)
	legacy := Version20251125
	v := Version20260728
	for range 2 {
		res, e := s.discover(ctx, v, probe)
		if e == nil {
			if sv := pick(res.SupportedVersions, isStateless); sv != "" {
				s.setStateless(sv, res)
				return nil
			}
			if lv := pick(res.SupportedVersions, func(x string) bool { return !isStateless(x) }); lv != "" {
				legacy = lv
			}
			break
		}
		if e.Category == Crash || e.Category == Disconnected {
			e.Hint = joinHint(e.Hint, "the connection ended on server/discover (era detection): pin a legacy version, e.g. --protocol-version "+Version20251125+", to skip it")
			return e
		}
		if e.Code == -32020 || e.Code == -32021 {
			// Header mismatch or missing capability: only a stateless-era server says that.
			s.setStateless(v, nil)
			return nil
		}
		if e.Code != -32022 {
			break // any other error or no answer: a legacy server
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
			legacy = lv
		}
		break
	}
	s.tellVersion("") // initialize goes without a version header
	return s.initialize(ctx, legacy)
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

// discover sends server/discover for version v with the given timeout. HTTP carries the
// version in a header too, so the connection learns v first.
func (s *Session) discover(ctx context.Context, v string, timeout time.Duration) (*discoverResult, *Error) {
	s.tellVersion(v)
	params := []byte(`{"_meta":{`)
	params = append(params, s.metaFor(v)...)
	params = append(params, "}}"...)
	resp, e := s.do(ctx, &request{method: "server/discover", params: params, plain: true, timeout: timeout,
		noHang: true, noCancel: true, noMeta: true, noRetry: true})
	if e != nil {
		return nil, e
	}
	var res discoverResult
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		return nil, &Error{Category: ProtocolError, Method: "server/discover", ID: resp.ID,
			Message: "the discover result does not decode: " + err.Error(), Frame: excerpt(resp.Result)}
	}
	return &res, nil
}

// setStateless switches the session to the stateless era with version v.
func (s *Session) setStateless(v string, res *discoverResult) {
	s.stateMu.Lock()
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
	s.stateMu.Unlock()
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
	info, _ := json.Marshal(s.opts.ClientInfo)
	params := []byte(`{"protocolVersion":`)
	params = appendString(params, v)
	params = append(params, `,"capabilities":`...)
	params = append(params, s.caps...)
	params = append(params, `,"clientInfo":`...)
	params = append(params, info...)
	params = append(params, '}')
	resp, e := s.do(ctx, &request{method: "initialize", params: params, plain: true, timeout: s.opts.ConnectTimeout,
		noHang: true, noCancel: true, noMeta: true, noRetry: true})
	if e != nil {
		return e
	}
	var res initializeResult
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		return &Error{Category: ProtocolError, Method: "initialize", ID: resp.ID,
			Message: "the initialize result does not decode: " + err.Error(), Frame: excerpt(resp.Result)}
	}
	if res.ProtocolVersion != v && !slices.Contains(legacyVersions(), res.ProtocolVersion) {
		return &Error{Category: ProtocolError, Method: "initialize", ID: resp.ID, Frame: excerpt(resp.Result),
			Message: "the server chose protocol version " + transportQuote(res.ProtocolVersion) +
				", which this client does not speak (it speaks " + joinVersions(legacyVersions()) + ")",
			Hint: "pin a version the server supports with --protocol-version, or upgrade the server"}
	}
	s.stateMu.Lock()
	old := s.state.Load()
	s.state.Store(&negotiated{era: EraLegacy, version: res.ProtocolVersion, serverInfo: res.ServerInfo,
		serverCaps: res.Capabilities, instructions: res.Instructions, gen: old.gen + 1})
	s.stateMu.Unlock()
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
