package localguard

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestLoopback: a loopback Host with the port, a loopback or absent Origin and the token pass;
// a foreign Host or Origin is 403, a missing or wrong token 401 with WWW-Authenticate.
func TestLoopback(t *testing.T) {
	const token = "0123abcd"
	h := Loopback{Port: "8123", Token: token, Realm: "mcpspec mcp"}.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	for _, c := range []struct {
		name, host, origin, auth string
		want                     int
	}{
		{"ok", "127.0.0.1:8123", "", "Bearer " + token, http.StatusNoContent},
		{"ok localhost origin", "localhost:8123", "http://localhost:6274", "Bearer " + token, http.StatusNoContent},
		{"ok ipv6", "[::1]:8123", "http://[::1]:3000", "Bearer " + token, http.StatusNoContent},
		{"ok 127.0.0.2", "127.0.0.2:8123", "https://127.0.0.1", "Bearer " + token, http.StatusNoContent},
		{"no token", "127.0.0.1:8123", "", "", http.StatusUnauthorized},
		{"wrong token", "127.0.0.1:8123", "", "Bearer nope", http.StatusUnauthorized},
		{"empty token", "127.0.0.1:8123", "", "Bearer ", http.StatusUnauthorized},
		{"basic auth", "127.0.0.1:8123", "", "Basic " + token, http.StatusUnauthorized},
		{"foreign origin", "127.0.0.1:8123", "https://evil.example", "Bearer " + token, http.StatusForbidden},
		{"null origin", "127.0.0.1:8123", "null", "Bearer " + token, http.StatusForbidden},
		{"non-http origin", "127.0.0.1:8123", "chrome-extension://localhost", "Bearer " + token, http.StatusForbidden},
		{"rebound host", "evil.example:8123", "", "Bearer " + token, http.StatusForbidden},
		{"other port", "127.0.0.1:9999", "", "Bearer " + token, http.StatusForbidden},
		{"no port", "127.0.0.1", "", "Bearer " + token, http.StatusForbidden},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/mcp", nil)
			r.Host = c.host
			if c.origin != "" {
				r.Header.Set("Origin", c.origin)
			}
			if c.auth != "" {
				r.Header.Set("Authorization", c.auth)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != c.want {
				t.Errorf("status = %d, want %d", w.Code, c.want)
			}
			if (w.Code == http.StatusUnauthorized) != (w.Header().Get("WWW-Authenticate") != "") {
				t.Errorf("status %d with WWW-Authenticate %q", w.Code, w.Header().Get("WWW-Authenticate"))
			}
		})
	}
}

// TestOrigins: the helpers the UI and the recording proxy use.
func TestOrigins(t *testing.T) {
	for _, c := range []struct {
		origin, host     string
		loopback, sameOK bool
	}{
		{"http://127.0.0.1:6274", "127.0.0.1:6274", true, true},
		{"http://LOCALHOST:6274", "localhost:6274", true, true},
		{"http://localhost:6275", "localhost:6274", true, false},
		{"https://127.0.0.1:6274", "127.0.0.1:6274", true, false},
		{"http://[::1]:1", "[::1]:1", true, true},
		{"http://evil.example", "evil.example", false, true},
		{"null", "127.0.0.1:6274", false, false},
		{"file://localhost", "localhost", false, false},
	} {
		if got := LoopbackOrigin(c.origin); got != c.loopback {
			t.Errorf("LoopbackOrigin(%q) = %v, want %v", c.origin, got, c.loopback)
		}
		if got := SameOrigin(c.origin, c.host); got != c.sameOK {
			t.Errorf("SameOrigin(%q, %q) = %v, want %v", c.origin, c.host, got, c.sameOK)
		}
	}
	for site, cross := range map[string]bool{"": false, "same-origin": false, "none": false, "same-site": true, "cross-site": true} {
		r := httptest.NewRequest("GET", "/", nil)
		if site != "" {
			r.Header.Set("Sec-Fetch-Site", site)
		}
		if CrossSite(r) != cross {
			t.Errorf("CrossSite(%q) = %v, want %v", site, !cross, cross)
		}
	}
}
