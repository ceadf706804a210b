package runner

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/session"
)

// findingLogs follows the sessions of a collection for what their servers sent that answered
// no request ([serverconn.Findings]). A test takes its session's findings when it gives the
// session back, so a finding belongs to the test that held the session when it arrived — or,
// when it arrived between tests, to the next test on that session; what is left when the
// sessions close belongs to the collection.
type findingLogs struct {
	mu    sync.Mutex // guards conns
	conns []*usedConn
}

// usedConn is a session a test (or the audit) used, with the name of its server.
type usedConn struct {
	c      *conn
	server string
	// responsive is whether the server answered the session's last request, so a ping
	// before closing it will be answered too.
	responsive bool
}

// take returns, as results (not yet masked), the findings of c's session since the last take,
// after [findingLogs.track].
func (ls *findingLogs) take(c *conn, server string, responsive bool) []result.Finding {
	ls.track(c, server, responsive)
	return toResults(server, c.Findings.Take())
}

// track records that c was used and whether its server answered the last request.
func (ls *findingLogs) track(c *conn, server string, responsive bool) {
	ls.mu.Lock()
	found := false
	for _, u := range ls.conns {
		if u.c == c {
			u.responsive, found = responsive, true
			break
		}
	}
	if !found {
		ls.conns = append(ls.conns, &usedConn{c: c, server: server, responsive: responsive})
	}
	ls.mu.Unlock()
}

// settle pings, concurrently, every session whose server still answers, before the sessions
// close (see [serverconn.Conn.Settle]).
func (ls *findingLogs) settle(ctx context.Context) {
	ls.mu.Lock()
	var live []*conn
	for _, u := range ls.conns {
		if u.responsive {
			live = append(live, u.c)
		}
	}
	ls.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range live {
		wg.Go(func() { c.Settle(ctx, nil) })
	}
	wg.Wait()
}

// rest takes what no test took, once every session is closed.
func (ls *findingLogs) rest() []result.Finding {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	var out []result.Finding
	for _, u := range ls.conns {
		out = append(out, toResults(u.server, u.c.Findings.Take())...)
	}
	return out
}

// toResults turns session findings of server into results.
func toResults(server string, fs []session.Finding) []result.Finding {
	var out []result.Finding
	for _, f := range fs {
		out = append(out, result.Finding{Server: server, Category: string(f.Category), Message: f.Message,
			Frame: strings.ToValidUTF8(string(f.Frame), "\uFFFD")})
	}
	return out
}

// answered reports whether err leaves the server answering: no error, or one the server sent.
func answered(err error) bool {
	switch session.CategoryOf(err) {
	case "", session.ServerError, session.ProtocolError:
		return true
	}
	return false
}

// strictFailure is the failure --strict adds to an attempt whose server sent findings.
func strictFailure(fs []result.Finding) result.Failure {
	msg := fmt.Sprintf("the server sent %s that answered no request: %s", textfmt.Plural(len(fs), "message"), fs[0].Message)
	if len(fs) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(fs)-1)
	}
	return result.Failure{Assertion: "strict", Message: msg}
}

// maskFindings masks every string of fs.
func maskFindings(fs []result.Finding, mask func(string) string) {
	for i := range fs {
		f := &fs[i]
		f.Message, f.Frame = mask(f.Message), mask(f.Frame)
	}
}
