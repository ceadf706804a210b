package interop

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// The interop tests reach their peers the way a user does: through a server SPEC, the string
// given to --server, resolved by package spec.

// specDialer resolves a SPEC with the transport forced to tr (or guessed when tr is "").
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

func streamableDialer(t *testing.T, url string) transport.Dialer {
	t.Helper()
	return specDialer(t, url, spec.Options{Transport: spec.HTTP})
}

func sseDialer(t *testing.T, url string) transport.Dialer {
	t.Helper()
	return specDialer(t, url, spec.Options{Transport: spec.SSE})
}

// autoDialer lets the SPEC pick the transport from the URL (Streamable HTTP with a fallback to
// the legacy HTTP+SSE transport).
func autoDialer(t *testing.T, url string) transport.Dialer {
	t.Helper()
	return specDialer(t, url, spec.Options{})
}

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
