package mcpserve

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"

	"github.com/mcpspec/mcpspec/internal/localguard"
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
	if !localguard.LoopbackHost(host) {
		return fmt.Errorf("--listen %q is not a loopback address: mcpspec mcp serves only 127.0.0.1, ::1 or localhost, since its tools start programs", addr)
	}
	return nil
}

// Guard admits a request to h only when its Host header is a loopback name with port, its
// Origin header is absent or a loopback origin (else 403: the DNS-rebinding defence the MCP
// specification asks for), and it carries "Authorization: Bearer token" (else 401). See
// [localguard.Loopback].
func Guard(h http.Handler, port, token string) http.Handler {
	return localguard.Loopback{Port: port, Token: token, Realm: "mcpspec mcp"}.Handler(h)
}
