package localguard

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// LoopbackHost reports whether host (a name or an address, without port; brackets allowed)
// names the loopback interface: "localhost", 127.0.0.0/8 or ::1.
func LoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// LoopbackOrigin reports whether an Origin header names an http or https origin on a
// loopback host.
func LoopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return LoopbackHost(u.Hostname())
}

// Loopback admits a request only when it is a loopback one from our own client: its Host is a
// loopback name with Port, its Origin is absent or a loopback origin of any port (the
// DNS-rebinding defence; a browser client such as the MCP Inspector runs on another port), and
// it carries "Authorization: Bearer Token".
type Loopback struct {
	// Port is the port the server listens on, as in the Host header.
	Port string
	// Token is the bearer token the server printed at start.
	Token string
	// Realm names the server in WWW-Authenticate (e.g. "mcpspec mcp").
	Realm string
}

// Check returns 0 when r is admitted, else the status (403 or 401) and a message.
func (l Loopback) Check(r *http.Request) (status int, msg string) {
	host, p, err := net.SplitHostPort(r.Host)
	if err != nil || p != l.Port || !LoopbackHost(host) {
		return http.StatusForbidden, "forbidden: Host must be a loopback address with this server's port"
	}
	if o := r.Header.Get("Origin"); o != "" && !LoopbackOrigin(o) {
		return http.StatusForbidden, "forbidden: Origin must be a loopback origin"
	}
	if !TokenOK(r.Header.Get("Authorization"), l.Token) {
		return http.StatusUnauthorized, "unauthorized: send the bearer token " + l.Realm + " printed at start"
	}
	return 0, ""
}

// Handler wraps h with [Loopback.Check].
func (l Loopback) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status, msg := l.Check(r); status != 0 {
			if status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="`+l.Realm+`"`)
			}
			http.Error(w, msg, status)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// TokenOK reports whether an Authorization header carries "Bearer token", compared in
// constant time.
func TokenOK(authorization, token string) bool {
	got, ok := strings.CutPrefix(authorization, "Bearer ")
	return ok && token != "" && subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
}

// SameOrigin reports whether an Origin header is the page's own origin http://HOST, HOST the
// request's Host header: what a server of its own page (mcpspec ui) demands.
func SameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Scheme == "http" && strings.EqualFold(u.Host, host)
}

// CrossSite reports whether the browser says r comes from another site (Sec-Fetch-Site
// cross-site or same-site; "same-site" includes another port of the same host).
func CrossSite(r *http.Request) bool {
	site := r.Header.Get("Sec-Fetch-Site")
	return site == "cross-site" || site == "same-site"
}
