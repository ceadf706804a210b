package mcpserve

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestGuard: a loopback Host with the port, a loopback or absent Origin and the token pass;
// a foreign Host or Origin is 403, a missing or wrong token 401.
func TestGuard(t *testing.T) {
	const token = "0123abcd"
	h := Guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }), "8123", token)
	for _, c := range []struct {
		name, host, origin, auth string
		want                     int
	}{
		{"ok", "127.0.0.1:8123", "", "Bearer " + token, http.StatusNoContent},
		{"ok localhost origin", "localhost:8123", "http://localhost:6274", "Bearer " + token, http.StatusNoContent},
		{"ok ipv6", "[::1]:8123", "http://[::1]:3000", "Bearer " + token, http.StatusNoContent},
		{"no token", "127.0.0.1:8123", "", "", http.StatusUnauthorized},
		{"wrong token", "127.0.0.1:8123", "", "Bearer nope", http.StatusUnauthorized},
		{"basic auth", "127.0.0.1:8123", "", "Basic " + token, http.StatusUnauthorized},
		{"foreign origin", "127.0.0.1:8123", "https://evil.example", "Bearer " + token, http.StatusForbidden},
		{"null origin", "127.0.0.1:8123", "null", "Bearer " + token, http.StatusForbidden},
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
		})
	}
}

// TestCheckListen: only loopback addresses may be listened on.
func TestCheckListen(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:0": true, "localhost:8080": true, "[::1]:0": true, "127.0.0.2:1": true,
		"0.0.0.0:0": false, ":8080": false, "192.168.1.2:80": false, "[::]:0": false, "example.com:80": false, "127.0.0.1": false,
	} {
		if err := CheckListen(addr); (err == nil) != ok {
			t.Errorf("CheckListen(%q) = %v, want ok=%v", addr, err, ok)
		}
	}
}
