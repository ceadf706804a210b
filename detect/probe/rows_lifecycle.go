package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// Versions the negotiation rows offer.
const (
	oldVersion     = session.Version20241105
	unknownVersion = "1900-01-01"
	// futureVersion is the unknown version of the stateless era: a date after 2026-07-28, which
	// a dual-era server cannot mistake for a handshake-era version.
	futureVersion = "2099-12-31"
)

// versionRE is the shape of an MCP protocol version.
var versionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`) })

func lifecycleRows() []Row {
	legacy := inEra(session.EraLegacy)
	stateless := inEra(session.EraStateless)
	return []Row{
		{ID: "lifecycle.initialize", Title: "initialize result has protocolVersion, capabilities, serverInfo",
			Spec: spec1125 + "Basic › Lifecycle › Initialization", Applies: legacy, Run: initializeResult},
		{ID: "lifecycle.version-latest", Title: "initialize offering the latest version",
			Spec: spec1125 + "Basic › Lifecycle › Version Negotiation", Applies: legacy,
			Run: func(ctx context.Context, e *Env) Outcome { return negotiate(ctx, e, session.Version20251125) }},
		{ID: "lifecycle.version-old", Title: "initialize offering the oldest version (" + oldVersion + ")",
			Spec: spec1125 + "Basic › Lifecycle › Version Negotiation", Applies: legacy,
			Run: func(ctx context.Context, e *Env) Outcome { return negotiate(ctx, e, oldVersion) }},
		{ID: "lifecycle.version-unknown", Title: "initialize offering an unknown version (" + unknownVersion + ")",
			Spec: spec1125 + "Basic › Lifecycle › Version Negotiation", Applies: legacy,
			Run: func(ctx context.Context, e *Env) Outcome { return negotiate(ctx, e, unknownVersion) }},
		{ID: "versioning.discover", Title: "server/discover lists the supported versions and capabilities",
			Spec:    spec0728 + "Basic › Versioning and Compatibility › Protocol Version Negotiation (server/discover)",
			Applies: stateless, Run: discoverResult},
		{ID: "versioning.unsupported", Title: "an unsupported version gets -32022 listing the supported ones",
			Spec: spec0728 + "Basic › Versioning and Compatibility › Protocol Version Negotiation", Applies: stateless,
			Run: unsupportedVersion},
		{ID: "versioning.missing-meta", Title: "a request without the _meta version is rejected with -32602",
			Spec:    spec0728 + "Basic › Overview › _meta (required request metadata)",
			Applies: every(stateless, onlyEra(session.EraStateless), notOver(spec.HTTP)), Run: missingMeta},
	}
}

// initializeResult checks the main session's initialize answer.
func initializeResult(ctx context.Context, e *Env) Outcome {
	var res []byte
	for _, f := range e.openFrames {
		if r, ok := initResult(f); ok {
			res = r
		}
		e.hub.note(dirReceived, frameText(f))
	}
	if res == nil {
		return Outcome{Fail, "no initialize result was seen while the session opened"}
	}
	var r struct {
		ProtocolVersion *string         `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ServerInfo      *struct {
			Name    *string `json:"name"`
			Version *string `json:"version"`
		} `json:"serverInfo"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return Outcome{Fail, "the initialize result does not decode: " + err.Error()}
	}
	var faults []string
	if r.ProtocolVersion == nil || *r.ProtocolVersion == "" {
		faults = append(faults, "no protocolVersion")
	} else if why := notAVersion(*r.ProtocolVersion); why != "" {
		faults = append(faults, why)
	}
	if !isObject(r.Capabilities) {
		faults = append(faults, "capabilities is not an object")
	}
	switch {
	case r.ServerInfo == nil:
		faults = append(faults, "no serverInfo")
	case r.ServerInfo.Name == nil || *r.ServerInfo.Name == "":
		faults = append(faults, "serverInfo has no name")
	case r.ServerInfo.Version == nil:
		faults = append(faults, "serverInfo has no version")
	}
	if len(faults) > 0 {
		return Outcome{Fail, "the initialize result has " + strings.Join(faults, ", ") +
			"; the probe went on in the version it offered (" + e.Version + ")"}
	}
	return Outcome{Pass, fmt.Sprintf("protocolVersion %s, serverInfo %s %s", *r.ProtocolVersion, *r.ServerInfo.Name, *r.ServerInfo.Version)}
}

// initResult returns the result of an initialize response frame.
func initResult(f transport.Frame) ([]byte, bool) {
	if f.Err != nil {
		return nil, false
	}
	var m struct {
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(f.Data, &m) != nil || m.Result == nil {
		return nil, false
	}
	var r struct {
		ProtocolVersion *string `json:"protocolVersion"`
	}
	if json.Unmarshal(m.Result, &r) != nil || r.ProtocolVersion == nil {
		return nil, false
	}
	return m.Result, true
}

// negotiate opens a session offering version offer and judges the version the server chose.
func negotiate(ctx context.Context, e *Env, offer string) Outcome {
	op := e.opener(offer)
	var chosen string
	frames, stop := e.hub.watch(func(f transport.Frame) bool { _, ok := initResult(f); return ok })
	c, err := op.Open(ctx)
	stop()
	if c != nil {
		_ = c.Close()
	}
	for len(frames) > 0 {
		if r, ok := initResult(<-frames); ok {
			var v struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			_ = json.Unmarshal(r, &v)
			chosen = v.ProtocolVersion
		}
	}
	known := slices.Contains(session.SupportedVersions(), chosen)
	switch {
	case chosen == "" && err != nil:
		if offer == unknownVersion && refused(err) {
			return Outcome{Fail, "initialize offering " + offer + " was refused (" + err.Error() + "); the server must answer with a version it supports"}
		}
		return Outcome{Fail, "initialize offering " + offer + " failed: " + err.Error()}
	case chosen == offer && offer == unknownVersion:
		return Outcome{Fail, "the server echoed the unknown version " + offer + " instead of answering with one it supports"}
	case chosen == offer:
		return Outcome{Pass, "the server agreed on " + offer}
	case notAVersion(chosen) != "":
		return Outcome{Fail, "the server answered " + notAVersion(chosen)}
	case chosen >= session.Version20260728:
		return Outcome{Fail, "initialize answered " + chosen + ", a stateless-era version, which the handshake cannot negotiate"}
	case offer == unknownVersion:
		return Outcome{Pass, "the server answered with " + chosen + ", a version it supports"}
	case !known:
		return Outcome{Pass, fmt.Sprintf("the server answered %s (allowed: it does not speak %s; mcpspec does not know %s)", chosen, offer, chosen)}
	}
	return Outcome{Pass, fmt.Sprintf("the server answered %s (allowed: it does not speak %s)", chosen, offer)}
}

// notAVersion says why v, a protocolVersion a server chose, is no MCP protocol version (not
// a date, or a date before the first version), or "". A date after the versions mcpspec
// knows may be a newer version: that is allowed.
func notAVersion(v string) string {
	switch {
	case !versionRE().MatchString(v):
		return fmt.Sprintf("protocolVersion %q, which is not a protocol version", v)
	case v < oldVersion:
		return fmt.Sprintf("protocolVersion %q, which is no MCP protocol version (the first is %s)", v, oldVersion)
	}
	return ""
}

// discoverResult checks the stateless era's server/discover result.
func discoverResult(ctx context.Context, e *Env) Outcome {
	a := e.call(ctx, "server/discover", e.params(""), 0)
	if !a.ok() {
		return Outcome{Fail, "server/discover: " + a.describe() + " (servers must implement it)"}
	}
	var r struct {
		SupportedVersions []any           `json:"supportedVersions"`
		Capabilities      json.RawMessage `json:"capabilities"`
		ServerInfo        json.RawMessage `json:"serverInfo"`
		Meta              struct {
			ServerInfo json.RawMessage `json:"io.modelcontextprotocol/serverInfo"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(a.result, &r); err != nil {
		return Outcome{Fail, "the result does not decode: " + err.Error()}
	}
	var faults []string
	var versions []string
	for _, v := range r.SupportedVersions {
		s, ok := v.(string)
		if !ok {
			faults = append(faults, fmt.Sprintf("supportedVersions holds %v, not a string", v))
			continue
		}
		versions = append(versions, s)
	}
	if !slices.Contains(versions, e.Version) {
		faults = append(faults, fmt.Sprintf("supportedVersions %v lacks %s", versions, e.Version))
	}
	if !isObject(r.Capabilities) {
		faults = append(faults, "capabilities is not an object")
	}
	if len(faults) > 0 {
		return Outcome{Fail, strings.Join(faults, "; ")}
	}
	if !isObject(r.ServerInfo) && !isObject(r.Meta.ServerInfo) {
		return Outcome{Warn, fmt.Sprintf("supportedVersions %v, but no serverInfo: clients cannot name the server", versions)}
	}
	return Outcome{Pass, fmt.Sprintf("supportedVersions %v", versions)}
}

// unsupportedVersion sends a request carrying an unknown version in _meta (and, over HTTP, in
// MCP-Protocol-Version) and expects UnsupportedProtocolVersionError.
func unsupportedVersion(ctx context.Context, e *Env) Outcome {
	params := []byte("{" + meta(futureVersion) + "}")
	var (
		code   int
		data   json.RawMessage
		status int
	)
	if e.Target.Transport == spec.HTTP {
		ans, err := e.post(ctx, request("1", "tools/list", params), func(h httpHeader) { h.Set("MCP-Protocol-Version", futureVersion) })
		if err != nil {
			return Outcome{Fail, err.Error()}
		}
		status = ans.status
		var ok bool
		code, _, data, ok = ans.rpcError()
		if !ok {
			return Outcome{Fail, fmt.Sprintf("HTTP %d without a JSON-RPC error; want 400 with -32022 (UnsupportedProtocolVersionError)", status)}
		}
	} else {
		a := e.call(ctx, "tools/list", params, 0)
		switch {
		case a.ok():
			return Outcome{Fail, "the request was served (" + a.describe() + "); an unsupported version must get -32022"}
		case !a.rpcError():
			return Outcome{Fail, a.describe() + "; want error -32022"}
		}
		code, data = a.err.Code, a.err.Data
	}
	if code != -32022 {
		return Outcome{Fail, fmt.Sprintf("error %d; an unsupported version must get -32022 (UnsupportedProtocolVersionError)", code)}
	}
	var d struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}
	_ = json.Unmarshal(data, &d)
	if len(d.Supported) == 0 {
		return Outcome{Fail, "-32022 without data.supported: the error must list the versions the server supports"}
	}
	if status != 0 && status != 400 {
		return Outcome{Fail, fmt.Sprintf("-32022 with HTTP %d; the Streamable HTTP binding requires 400 Bad Request", status)}
	}
	if d.Requested != futureVersion {
		return Outcome{Warn, fmt.Sprintf("-32022 listing %v, but data.requested is %q, not %q", d.Supported, d.Requested, futureVersion)}
	}
	return Outcome{Pass, fmt.Sprintf("-32022 listing %v", d.Supported)}
}

// missingMeta sends a request without _meta to a stateless-only server.
func missingMeta(ctx context.Context, e *Env) Outcome {
	a := e.call(ctx, "tools/list", []byte("{}"), 0)
	switch {
	case a.code() == -32602:
		return Outcome{Pass, "error -32602"}
	case a.rpcError():
		return Outcome{Warn, a.describe() + "; the specification's error for missing request metadata is -32602"}
	case a.ok():
		return Outcome{Fail, "served without the required _meta: " + a.describe()}
	}
	return Outcome{Fail, a.describe()}
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return true
		}
		return false
	}
	return false
}
