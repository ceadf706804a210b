package probe

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// foreign is the web origin the DNS-rebinding and CORS rows pretend to come from.
const foreign = "evil.example"

func originRows() []Row {
	web := over(spec.HTTP, spec.SSE)
	const security = spec1125 + "Basic › Transports › Streamable HTTP › Security Warning (Origin validation, DNS rebinding)"
	return []Row{
		{ID: "http.origin", Title: "a foreign Origin gets 403",
			Spec: security, Applies: web, Run: foreignOrigin},
		{ID: "http.dns-rebinding", Title: "a foreign Host and Origin (DNS rebinding) are rejected",
			Spec: security + "; Basic › Security Best Practices › Local MCP Server Compromise", Applies: every(web, loopback), Run: dnsRebinding},
		{ID: "http.localhost-accepted", Title: "the server's own loopback Host and Origin are accepted",
			Spec: security, Applies: every(web, loopback), Run: localhostAccepted},
		{ID: "http.cors", Title: "CORS does not open the server to any web page",
			Spec: security + "; Fetch Standard › CORS protocol", Applies: web, Run: cors},
	}
}

// opening sends the request that opens a session of this era and transport with edit applied:
// initialize (or server/discover) POSTed to the Streamable HTTP endpoint, or the GET of the
// HTTP+SSE stream.
func (e *Env) opening(ctx context.Context, edit func(httpHeader)) (*httpAnswer, error) {
	if e.Target.Transport == spec.SSE {
		return e.exchangeURL(ctx, e.endpoint(), http.MethodGet, nil, func(h httpHeader) {
			h.Set("Accept", "text/event-stream")
			edit(h)
		}, true)
	}
	body := e.initializeBody()
	if e.Target.Era == session.EraStateless {
		body = request("1", "server/discover", e.params(""))
	}
	return e.post(ctx, body, func(h httpHeader) {
		h.Del("Mcp-Session-Id")
		if e.Target.Era == session.EraLegacy {
			h.Del("MCP-Protocol-Version")
		}
		edit(h)
	})
}

// accepted reports whether an opening request was served.
func accepted(a *httpAnswer) bool { return a.status >= 200 && a.status < 300 }

// foreignOrigin opens with a foreign Origin.
func foreignOrigin(ctx context.Context, e *Env) Outcome {
	a, err := e.opening(ctx, func(h httpHeader) { h.Set("Origin", "http://"+foreign) })
	switch {
	case err != nil:
		return Outcome{Fail, err.Error()}
	case a.status == http.StatusForbidden:
		return Outcome{Pass, "403 Forbidden"}
	case a.status >= 400 && a.status < 500:
		return Outcome{Warn, fmt.Sprintf("HTTP %d; an invalid Origin must get 403 Forbidden", a.status)}
	case accepted(a):
		// The Host was the server's own, so this is not DNS rebinding (http.dns-rebinding checks
		// that), but a web page can still send simple cross-origin requests.
		return Outcome{Warn, fmt.Sprintf("HTTP %d: a request from origin http://%s was served; servers must validate Origin and answer an invalid one with 403", a.status, foreign)}
	}
	return Outcome{Fail, a.describe()}
}

// dnsRebinding opens as a browser would after DNS rebinding: Host and Origin name the
// attacker's domain, which resolved to the loopback address.
func dnsRebinding(ctx context.Context, e *Env) Outcome {
	a, err := e.opening(ctx, func(h httpHeader) {
		h.Set("Host", foreign)
		h.Set("Origin", "http://"+foreign)
	})
	switch {
	case err != nil:
		return Outcome{Fail, err.Error()}
	case a.status >= 400 && a.status < 500:
		return Outcome{Pass, fmt.Sprintf("HTTP %d", a.status)}
	}
	return Outcome{Fail, fmt.Sprintf("HTTP %d: a request with Host %s and Origin http://%s was served; a web page could drive this server through DNS rebinding", a.status, foreign, foreign)}
}

// localhostAccepted opens with the Host and Origin of the server's own loopback URL.
func localhostAccepted(ctx context.Context, e *Env) Outcome {
	u, err := url.Parse(e.endpoint())
	if err != nil {
		return Outcome{Fail, err.Error()}
	}
	a, err := e.opening(ctx, func(h httpHeader) {
		h.Set("Host", u.Host)
		h.Set("Origin", "http://"+u.Host)
	})
	switch {
	case err != nil:
		return Outcome{Fail, err.Error()}
	case accepted(a):
		return Outcome{Pass, fmt.Sprintf("HTTP %d for Host %s", a.status, u.Host)}
	}
	return Outcome{Fail, fmt.Sprintf("HTTP %d for Host %s and Origin http://%s: the server rejects its own loopback origin", a.status, u.Host, u.Host)}
}

// cors sends a CORS preflight from a foreign origin.
func cors(ctx context.Context, e *Env) Outcome {
	a, err := e.exchangeURL(ctx, e.endpoint(), http.MethodOptions, nil, func(h httpHeader) {
		h.Set("Origin", "http://"+foreign)
		h.Set("Access-Control-Request-Method", http.MethodPost)
		h.Set("Access-Control-Request-Headers", "content-type, mcp-session-id, mcp-protocol-version")
	}, true)
	if err != nil {
		return Outcome{Fail, err.Error()}
	}
	allow := a.header.Get("Access-Control-Allow-Origin")
	creds := a.header.Get("Access-Control-Allow-Credentials") == "true"
	switch {
	case allow == "http://"+foreign && creds:
		return Outcome{Fail, "the preflight echoes origin http://" + foreign + " with credentials allowed: any web page can call this server with the user's cookies"}
	case allow == "*" || allow == "http://"+foreign:
		return Outcome{Warn, "Access-Control-Allow-Origin: " + allow + " — any web page the user visits can call this server from the browser"}
	}
	if allow == "" {
		return Outcome{Pass, fmt.Sprintf("HTTP %d without Access-Control-Allow-Origin for a foreign origin", a.status)}
	}
	return Outcome{Pass, "Access-Control-Allow-Origin: " + allow + " (not the foreign origin)"}
}
