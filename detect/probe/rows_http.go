package probe

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// unknownSession is the Mcp-Session-Id of the unknown-session row.
const unknownSession = "mcpspec-probe-unknown-session"

func httpRows() []Row {
	legacyHTTP := every(over(spec.HTTP), inEra(session.EraLegacy))
	statelessHTTP := every(over(spec.HTTP), inEra(session.EraStateless))
	const sm = spec1125 + "Basic › Transports › Streamable HTTP › Session Management"
	return []Row{
		{ID: "http.session-id", Title: "the session id issued at initialize is visible ASCII",
			Spec: sm, Applies: legacyHTTP, Run: sessionIDIssued},
		{ID: "http.session-required", Title: "a request without the session id gets 400",
			Spec: sm, Applies: legacyHTTP, Run: sessionRequired},
		{ID: "http.session-unknown", Title: "a request with an unknown session id gets 404",
			Spec: sm, Applies: legacyHTTP, Run: sessionUnknown},
		{ID: "http.session-delete", Title: "after DELETE the session id gets 404",
			Spec: sm, Applies: legacyHTTP, Run: sessionDelete},
		{ID: "http.get-stream", Title: "GET opens an event stream or answers 405",
			Spec: spec1125 + "Basic › Transports › Streamable HTTP › Listening for Messages from the Server", Applies: legacyHTTP, Run: getStream},
		{ID: "http.protocol-version-header", Title: "an unsupported MCP-Protocol-Version gets 400",
			Spec: spec1125 + "Basic › Transports › Streamable HTTP › Protocol Version Header", Applies: legacyHTTP, Run: versionHeader},
		{ID: "http.notification-202", Title: "a notification POST gets 202 with no body",
			Spec: spec1125 + "Basic › Transports › Streamable HTTP › Sending Messages to the Server", Applies: over(spec.HTTP), Run: notification202},
		{ID: "http.content-type", Title: "a request is answered as application/json or text/event-stream",
			Spec: spec1125 + "Basic › Transports › Streamable HTTP › Sending Messages to the Server", Applies: over(spec.HTTP), Run: contentType},
		{ID: "http.concurrent-posts", Title: "three POSTs in flight at once are all answered",
			Spec: spec1125 + "Basic › Transports › Streamable HTTP › Multiple Connections", Applies: over(spec.HTTP), Run: concurrentPosts},
		{ID: "http.header-validation", Title: "a missing or mismatched Mcp-Method gets 400 with -32020",
			Spec: spec0728 + "Basic › Transports › Streamable HTTP › Server Validation", Applies: statelessHTTP, Run: headerValidation},
		{ID: "http.stateless-get-delete", Title: "GET and DELETE get 405 on a stateless-only server",
			Spec:    spec0728 + "Basic › Transports › Streamable HTTP › Backward Compatibility › Earlier Streamable HTTP Revisions",
			Applies: every(statelessHTTP, onlyEra(session.EraStateless)), Run: statelessGetDelete},
	}
}

// initializeBody is a raw initialize request.
func (e *Env) initializeBody() []byte {
	return request("1", "initialize", []byte(`{"protocolVersion":`+strconv.Quote(e.Version)+`,"capabilities":{},"clientInfo":`+clientInfo+`}`))
}

// rawInit opens a session of its own with a raw initialize (and notifications/initialized):
// the rows that end or break a session never touch the main one.
func (e *Env) rawInit(ctx context.Context) (*httpAnswer, string, error) {
	a, err := e.post(ctx, e.initializeBody(), func(h httpHeader) {
		h.Del("Mcp-Session-Id")
		h.Del("MCP-Protocol-Version")
	})
	if err != nil {
		return nil, "", err
	}
	if _, ok := a.result(); a.status != http.StatusOK || !ok {
		return a, "", fmt.Errorf("initialize: %s", a.describe())
	}
	sid := a.header.Get("Mcp-Session-Id")
	if sid != "" {
		if _, err := e.post(ctx, notification("notifications/initialized", nil), func(h httpHeader) { h.Set("Mcp-Session-Id", sid) }); err != nil {
			return a, sid, err
		}
	}
	return a, sid, nil
}

// withSession runs check when the main session has a session id, else the row is n/a.
func withSession(e *Env, check func(sid string) Outcome) Outcome {
	sid := e.sessionID()
	if sid == "" {
		return Outcome{NotApplicable, "the server issued no session id (it runs without sessions, which is allowed)"}
	}
	return check(sid)
}

// sessionIDIssued checks the session id of a fresh initialize.
func sessionIDIssued(ctx context.Context, e *Env) Outcome {
	_, sid, err := e.rawInit(ctx)
	switch {
	case err != nil:
		return Outcome{Fail, err.Error()}
	case sid == "":
		return Outcome{NotApplicable, "no Mcp-Session-Id: the server runs without sessions (allowed)"}
	}
	for _, c := range []byte(sid) {
		if c < 0x21 || c > 0x7e {
			return Outcome{Fail, fmt.Sprintf("the session id %q holds a byte outside visible ASCII (0x21–0x7E)", sid)}
		}
	}
	return Outcome{Pass, fmt.Sprintf("Mcp-Session-Id of %d visible ASCII characters", len(sid))}
}

// sessionMethod is a request only an initialized session may make (ping may come before
// initialize): the first list method the server declares, "" when it declares none.
func (e *Env) sessionMethod() string {
	for _, f := range features {
		if e.hasCap(f.capability) {
			return f.method
		}
	}
	return ""
}

// sessionRequired sends a request of the main session without its id.
func sessionRequired(ctx context.Context, e *Env) Outcome {
	return withSession(e, func(string) Outcome {
		method := e.sessionMethod()
		if method == "" {
			return Outcome{NotApplicable, "the server declares no list method to make a request only a session may make"}
		}
		a, err := e.post(ctx, request("1", method, []byte("{}")), func(h httpHeader) { h.Del("Mcp-Session-Id") })
		if err != nil {
			return Outcome{Fail, err.Error()}
		}
		_, served := a.result()
		switch {
		case a.status == http.StatusBadRequest:
			return Outcome{Pass, a.describe()}
		case a.status >= 400 && a.status < 500:
			return Outcome{Warn, a.describe() + "; a request without the required session id should get 400 Bad Request"}
		case a.status < 300 && !served:
			return Outcome{Pass, a.describe() + ": not served (the server treated it as a new, uninitialized session)"}
		case a.status < 300:
			return Outcome{Fail, method + " without a session id got " + a.describe() + ": the server issued a session id but serves requests without it"}
		}
		return Outcome{Fail, a.describe()}
	})
}

// sessionUnknown sends a request with a session id the server never issued.
func sessionUnknown(ctx context.Context, e *Env) Outcome {
	return withSession(e, func(sid string) Outcome {
		method := e.sessionMethod()
		if method == "" {
			method = "ping"
		}
		// A server that checks only the format of an id serves any id of its own shape: forge
		// one from two it issued (the main session's and a fresh one), then try one of
		// another shape.
		other := ""
		if _, s2, err := e.rawInit(ctx); err == nil {
			other = s2
		}
		forged := forgeSessionID(sid, other, newRand())
		var out Outcome
		for i, id := range []string{forged, unknownSession} {
			what := fmt.Sprintf("a session id the server never issued, in the shape of its own (%s)", id)
			if i == 1 {
				what = "a session id the server never issued (" + id + ")"
			}
			a, err := e.post(ctx, request(strconv.Itoa(i+1), method, []byte("{}")), func(h httpHeader) { h.Set("Mcp-Session-Id", id) })
			switch {
			case err != nil:
				return Outcome{Fail, err.Error()}
			case a.status < 300:
				return Outcome{Fail, a.describe() + ": " + what + " was accepted"}
			case i > 0:
			case a.status == http.StatusNotFound:
				out = Outcome{Pass, a.describe() + " for " + what}
			case a.status >= 400 && a.status < 500:
				out = Outcome{Warn, a.describe() + "; an unknown session should get 404 Not Found, which tells the client to initialize again"}
			default:
				out = Outcome{Fail, a.describe()}
			}
		}
		return out
	})
}

// newRand returns a source of randomness for forged values.
func newRand() *rand.Rand {
	return rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(os.Getpid())))
}

// sessionDelete ends a session of its own with DELETE and uses it again.
func sessionDelete(ctx context.Context, e *Env) Outcome {
	return withSession(e, func(string) Outcome {
		_, sid, err := e.rawInit(ctx)
		if err != nil {
			return Outcome{Fail, err.Error()}
		}
		if sid == "" {
			return Outcome{NotApplicable, "a fresh initialize issued no session id"}
		}
		d, err := e.exchange(ctx, http.MethodDelete, nil, func(h httpHeader) {
			h.Set("Mcp-Session-Id", sid)
			h.Set("MCP-Protocol-Version", e.Version)
		})
		switch {
		case err != nil:
			return Outcome{Fail, "DELETE: " + err.Error()}
		case d.status == http.StatusMethodNotAllowed:
			return Outcome{NotApplicable, "DELETE answered 405: the server does not let clients end sessions (allowed)"}
		case d.status >= 300:
			return Outcome{Fail, "DELETE answered " + d.describe()}
		}
		a, err := e.post(ctx, request("2", "ping", nil), func(h httpHeader) { h.Set("Mcp-Session-Id", sid) })
		switch {
		case err != nil:
			return Outcome{Fail, err.Error()}
		case a.status == http.StatusNotFound:
			// A server that forgets the session but then checks only the format of ids
			// serves a forged one of the same shape.
			forged := forgeSessionID(sid, e.sessionID(), newRand())
			f, err := e.post(ctx, request("3", "ping", nil), func(h httpHeader) { h.Set("Mcp-Session-Id", forged) })
			if err == nil && f.status < 300 {
				return Outcome{Fail, fmt.Sprintf("DELETE %d, then 404; but a forged id in the same shape (%s) got %s", d.status, forged, f.describe())}
			}
			return Outcome{Pass, fmt.Sprintf("DELETE %d, then 404", d.status)}
		case a.status >= 400 && a.status < 500:
			return Outcome{Warn, fmt.Sprintf("after DELETE answered %d, the session gets %s; an ended session must get 404 Not Found, which tells the client to initialize again", d.status, a.describe())}
		}
		return Outcome{Fail, fmt.Sprintf("after DELETE answered %d, the session still gets %s; it must get 404 Not Found", d.status, a.describe())}
	})
}

// getStream opens the GET stream of the main session.
func getStream(ctx context.Context, e *Env) Outcome {
	a, err := e.exchangeURL(ctx, e.endpoint(), http.MethodGet, nil, func(h httpHeader) {
		h.Set("Accept", "text/event-stream")
		h.Set("MCP-Protocol-Version", e.Version)
		if sid := e.sessionID(); sid != "" {
			h.Set("Mcp-Session-Id", sid)
		}
	}, true)
	switch {
	case err != nil:
		return Outcome{Fail, "GET: " + err.Error()}
	case a.status == http.StatusMethodNotAllowed:
		return Outcome{Pass, "405: the server offers no GET stream"}
	case a.status == http.StatusOK && a.contentType() == "text/event-stream":
		return Outcome{Pass, "200 text/event-stream"}
	}
	return Outcome{Fail, fmt.Sprintf("GET answered HTTP %d %q; it must answer an event stream or 405 Method Not Allowed", a.status, a.header.Get("Content-Type"))}
}

// versionHeader sends a request of the main session with an unsupported version header.
func versionHeader(ctx context.Context, e *Env) Outcome {
	if e.Version < session.Version20250618 {
		return Outcome{NotApplicable, "the header exists from 2025-06-18; the session speaks " + e.Version}
	}
	good, err := e.post(ctx, request("1", "ping", nil), nil)
	if err != nil {
		return Outcome{Fail, err.Error()}
	}
	if good.status >= 300 {
		return Outcome{Fail, "a request with MCP-Protocol-Version " + e.Version + " (the negotiated version) got " + good.describe()}
	}
	a, err := e.post(ctx, request("2", "ping", nil), func(h httpHeader) { h.Set("MCP-Protocol-Version", unknownVersion) })
	switch {
	case err != nil:
		return Outcome{Fail, err.Error()}
	case a.status == http.StatusBadRequest:
		return Outcome{Pass, "an unsupported version got " + a.describe()}
	case a.status >= 400 && a.status < 500:
		return Outcome{Warn, "an unsupported version got " + a.describe() + "; the specification says 400 Bad Request"}
	}
	return Outcome{Fail, "MCP-Protocol-Version " + unknownVersion + " got " + a.describe() + "; an invalid or unsupported version must get 400 Bad Request"}
}

// notification202 POSTs a notification.
func notification202(ctx context.Context, e *Env) Outcome {
	a, err := e.post(ctx, notification("notifications/cancelled", e.params(`"requestId":987654321,"reason":"mcpspec probe"`)), nil)
	switch {
	case err != nil:
		return Outcome{Fail, err.Error()}
	case a.status == http.StatusAccepted && len(strings.TrimSpace(string(a.body))) == 0 && len(a.events) == 0:
		return Outcome{Pass, "202 Accepted, no body"}
	case a.status == http.StatusAccepted:
		return Outcome{Fail, "202 with a body; an accepted notification gets 202 with no body"}
	case a.status >= 400 && a.status < 500:
		return Outcome{Pass, fmt.Sprintf("HTTP %d: the server did not accept the notification (allowed)", a.status)}
	}
	return Outcome{Fail, a.describe() + "; an accepted notification gets 202 Accepted with no body"}
}

// contentType checks the media type of an answered request.
func contentType(ctx context.Context, e *Env) Outcome {
	a, err := e.post(ctx, request("1", e.pingMethod(), e.params("")), nil)
	if err != nil {
		return Outcome{Fail, err.Error()}
	}
	ct := a.contentType()
	switch {
	case a.status != http.StatusOK:
		return Outcome{Fail, e.pingMethod() + " got " + a.describe()}
	case ct == "application/json", ct == "text/event-stream":
		return Outcome{Pass, ct}
	}
	return Outcome{Fail, fmt.Sprintf("Content-Type %q; a request's answer must be application/json or text/event-stream", a.header.Get("Content-Type"))}
}

// concurrentPosts sends three tools/list at once (ping when the server has no tools).
func concurrentPosts(ctx context.Context, e *Env) Outcome {
	method := e.pingMethod()
	if e.hasCap("tools") {
		method = "tools/list"
	}
	answers := make([]*httpAnswer, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() { answers[i], errs[i] = e.post(ctx, request(strconv.Itoa(1000+i), method, e.params("")), nil) })
	}
	wg.Wait()
	var statuses []string
	for i, a := range answers {
		if errs[i] != nil {
			return Outcome{Fail, fmt.Sprintf("request %d: %v", i+1, errs[i])}
		}
		statuses = append(statuses, strconv.Itoa(a.status))
		if _, ok := a.result(); a.status != http.StatusOK || !ok {
			return Outcome{Fail, fmt.Sprintf("request %d of 3 got %s", i+1, a.describe())}
		}
	}
	return Outcome{Pass, "3 concurrent " + method + " answered (HTTP " + strings.Join(statuses, ", ") + ")"}
}

// headerValidation sends stateless requests whose Mcp-Method is wrong, then missing.
func headerValidation(ctx context.Context, e *Env) Outcome {
	body := request("1", "tools/list", e.params(""))
	var notes []string
	for _, c := range []struct {
		what string
		edit func(httpHeader)
	}{
		{"Mcp-Method tools/call for a tools/list", func(h httpHeader) { h.Set("Mcp-Method", "tools/call") }},
		{"no Mcp-Method", func(h httpHeader) { h.Del("Mcp-Method") }},
	} {
		a, err := e.post(ctx, body, c.edit)
		if err != nil {
			return Outcome{Fail, err.Error()}
		}
		code, _, _, isErr := a.rpcError()
		switch {
		case a.status == http.StatusBadRequest && isErr && code == -32020:
			notes = append(notes, c.what+": 400 with -32020")
		case a.status < 300:
			return Outcome{Fail, c.what + " was served (" + a.describe() + "); the server must reject it with 400 and -32020 (HeaderMismatch)"}
		case a.status == http.StatusBadRequest:
			return Outcome{Warn, c.what + " got " + a.describe() + "; the specification's error is -32020 (HeaderMismatch)"}
		default:
			return Outcome{Fail, c.what + " got " + a.describe() + "; the server must answer 400 with -32020"}
		}
	}
	return Outcome{Pass, strings.Join(notes, "; ")}
}

// statelessGetDelete sends GET and DELETE to a stateless-only server.
func statelessGetDelete(ctx context.Context, e *Env) Outcome {
	var got []string
	bad := false
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		a, err := e.exchangeURL(ctx, e.endpoint(), m, nil, func(h httpHeader) {
			h.Set("Accept", "text/event-stream")
			h.Set("MCP-Protocol-Version", e.Version)
		}, true)
		if err != nil {
			return Outcome{Fail, m + ": " + err.Error()}
		}
		got = append(got, fmt.Sprintf("%s %d", m, a.status))
		bad = bad || a.status != http.StatusMethodNotAllowed
	}
	if bad {
		return Outcome{Warn, strings.Join(got, ", ") + "; a stateless-only server should answer GET and DELETE with 405 Method Not Allowed"}
	}
	return Outcome{Pass, strings.Join(got, ", ")}
}
