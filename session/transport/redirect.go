package transport

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// MaxRedirects is how many redirects an HTTP transport follows for one request (net/http's
// default).
const MaxRedirects = 10

// ErrCrossOriginRedirect is returned (wrapped in the *url.Error of the request) when a server
// redirects a request to another origin: another scheme, host or port.
var ErrCrossOriginRedirect = errors.New("redirect to another origin refused")

// SameOriginRedirects is an [http.Client.CheckRedirect] that follows a redirect only within the
// origin (scheme, host and port) of the first request. A redirect to another origin would
// carry Authorization, custom headers and, for 307 and 308, the request body to a server the
// user never named, and its answer would be credited to the first one: it fails the request
// with [ErrCrossOriginRedirect] instead. The HTTP transports' own clients use it, as the SSE
// transport checks its endpoint's origin.
func SameOriginRedirects(req *http.Request, via []*http.Request) error {
	if len(via) >= MaxRedirects {
		return fmt.Errorf("stopped after %d redirects", MaxRedirects)
	}
	if len(via) > 0 && !SameOrigin(via[0].URL, req.URL) {
		return fmt.Errorf("%w: %s to %s", ErrCrossOriginRedirect, Origin(via[0].URL), Origin(req.URL))
	}
	return nil
}

// SameOrigin reports whether a and b have the same scheme, host and port (an absent port is
// the scheme's default).
func SameOrigin(a, b *url.URL) bool { return Origin(a) == Origin(b) }

// Origin returns u's origin, scheme://host:port, with the scheme's default port when u gives
// none.
func Origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http", "ws":
			port = "80"
		case "https", "wss":
			port = "443"
		}
	}
	return scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port
}
