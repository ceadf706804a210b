package mcpserve

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// NewToken returns a bearer token: 32 random bytes, hex-encoded.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// CheckListen accepts only a loopback listen address: 127.0.0.0/8, ::1 or localhost, with a port.
func CheckListen(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %q: %v (want 127.0.0.1:PORT)", addr, err)
	}
	if !loopbackHost(host) {
		return fmt.Errorf("--listen %q is not a loopback address: mcpspec mcp serves only 127.0.0.1, ::1 or localhost, since its tools start programs", addr)
	}
	return nil
}

// loopbackHost reports whether host (no port, no brackets) names the loopback interface.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Guard admits a request to h only when its Host header is a loopback name with port, its
// Origin header is absent or a loopback origin (else 403: the DNS-rebinding defence the MCP
// specification asks for), and it carries "Authorization: Bearer token" (else 401).
func Guard(h http.Handler, port, token string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, p, err := net.SplitHostPort(r.Host)
		if err != nil || p != port || !loopbackHost(strings.Trim(host, "[]")) {
			http.Error(w, "forbidden: Host must be a loopback address with this server's port", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !loopbackOrigin(o) {
			http.Error(w, "forbidden: Origin must be a loopback origin", http.StatusForbidden)
			return
		}
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcpspec mcp"`)
			http.Error(w, "unauthorized: send the bearer token mcpspec mcp printed at start", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// loopbackOrigin reports whether an Origin header names an http(s) origin on loopback.
func loopbackOrigin(o string) bool {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return loopbackHost(u.Hostname())
}
