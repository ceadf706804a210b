package probe

import (
	"math/rand/v2"
	"regexp"
	"testing"

	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// TestForgeSessionIDKeepsTheShape: a forged id keeps the shared prefix, the length, the
// separators and the alphabet of the ids the server issued, and is none of them.
func TestForgeSessionIDKeepsTheShape(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		a, b  string
		shape *regexp.Regexp
	}{
		{"mcp-session-3f2b8c1e-9d4a-4e6b-8f00-1a2b3c4d5e6f", "mcp-session-77aa0c1e-1111-4e6b-8f00-ffffeeeedddd",
			regexp.MustCompile(`^mcp-session-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)},
		{"0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210", regexp.MustCompile(`^[0-9a-f]{32}$`)},
		{"SESS_AbCdEf123", "SESS_ZzYyXx987", regexp.MustCompile(`^SESS_[A-Za-z]{6}[0-9]{3}$`)},
		{"3F2B8C1E", "", regexp.MustCompile(`^[0-9A-F]{8}$`)},
	} {
		for range 20 {
			f := forgeSessionID(c.a, c.b, r)
			if !c.shape.MatchString(f) || f == c.a || f == c.b {
				t.Errorf("forgeSessionID(%q, %q) = %q, want a new id matching %s", c.a, c.b, f, c.shape)
			}
		}
	}
}

// TestForgedSessionIDs: a server that checks only the shape of session ids serves a forged one
// (http.session-unknown fails) and, after DELETE, another (http.session-delete fails); the
// server that looks ids up passes both.
func TestForgedSessionIDs(t *testing.T) {
	t.Parallel()
	rows := []string{"http.session-unknown@legacy", "http.session-delete@legacy"}
	for _, c := range []struct {
		name string
		o    *mcptest.Options
		want Status
	}{
		{"shape only", &mcptest.Options{ShapedSessionIDs: true}, Fail},
		{"looked up", nil, Pass},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := mcptest.NewServer(c.o)
			t.Cleanup(srv.Close)
			rep := probeSpec(t, srv.URL, &spec.Options{Transport: spec.HTTP}, Options{Checks: []string{"http.session-*"}})
			for _, k := range rows {
				if r := statusOfKey(t, rep, k); r.Status != c.want {
					t.Errorf("%s = %s (%s), want %s", k, r.Status, r.Message, c.want)
				}
			}
		})
	}
}
