package interop

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/spec"
	"github.com/mcpspec/mcpspec/session/transport/sse"
	"github.com/mcpspec/mcpspec/session/transport/streamable"
)

// How the tests reach their peers: the HTTP transports are configured directly; stdio and TCP,
// and the "auto" cases, go through a server SPEC (the string given to --server, resolved by
// package spec), the way a user reaches a server.

// specDialer resolves SPEC s with options o.
func specDialer(t *testing.T, s string, o spec.Options) transport.Dialer {
	t.Helper()
	d, info, err := spec.Parse(s, &o)
	if errors.Is(err, spec.ErrUnavailable) {
		// The transports land in parallel with this suite; see the report for which ones.
		t.Skipf("SPEC %q: %v", s, err)
	}
	if err != nil {
		t.Fatalf("spec.Parse(%q): %v", s, err)
	}
	t.Logf("server: %s", info)
	return d
}

// streamableDialer speaks Streamable HTTP to url.
func streamableDialer(t *testing.T, url string) transport.Dialer {
	t.Helper()
	return streamable.Dialer{URL: url}
}

// sseDialer speaks the legacy HTTP+SSE transport to url (the GET endpoint).
func sseDialer(t *testing.T, url string) transport.Dialer {
	t.Helper()
	return sse.Dialer{URL: url}
}

// autoDialer lets the SPEC pick the transport from the URL (Streamable HTTP with a fallback to
// the legacy HTTP+SSE transport).
func autoDialer(t *testing.T, url string) transport.Dialer {
	t.Helper()
	return specDialer(t, url, spec.Options{})
}

// tcpDialer speaks newline-delimited JSON-RPC over TCP to addr.
func tcpDialer(t *testing.T, addr string) transport.Dialer {
	t.Helper()
	return specDialer(t, "tcp://"+addr, spec.Options{})
}

// stdioDialer runs argv as a child process over stdio, with env added to the inherited
// environment, in dir.
func stdioDialer(t *testing.T, argv, env []string, dir string) transport.Dialer {
	t.Helper()
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = shellQuote(a)
	}
	return specDialer(t, strings.Join(quoted, " "), spec.Options{Transport: spec.Stdio, Env: env, Dir: dir})
}

var plainWord = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellQuote quotes s as one word for spec.Split.
func shellQuote(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
