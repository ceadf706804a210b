package runner

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/session"
)

// findingLog collects the findings of one session (what its server sent that answered no
// request) until a test takes them. A test takes them when it gives the session back, so a
// finding belongs to the test that held the session when it arrived — or, when it arrived
// between tests, to the next test on that session; what is left when the session closes belongs
// to the collection.
type findingLog struct {
	server string

	mu   sync.Mutex // guards the fields below
	list []session.Finding
	// s is the session, once a test used it; responsive is whether its last request was
	// answered (so a ping before closing it will be too).
	s          *session.Session
	responsive bool
}

// used records the session and whether its server answered the last request.
func (l *findingLog) used(s *session.Session, responsive bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.s, l.responsive = s, responsive
}

// add records f; it runs on the session's reader goroutine.
func (l *findingLog) add(f session.Finding) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list = append(l.list, f)
}

// take returns the findings recorded since the last take, as results (not yet masked).
func (l *findingLog) take() []result.Finding {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	list := l.list
	l.list = nil
	l.mu.Unlock()
	out := make([]result.Finding, 0, len(list))
	for _, f := range list {
		out = append(out, result.Finding{Server: l.server, Category: string(f.Category), Message: f.Message,
			Frame: strings.ToValidUTF8(string(f.Frame), "\uFFFD")})
	}
	return out
}

// findingLogs are the logs of every session a collection opened, for what is left at the end.
type findingLogs struct {
	mu   sync.Mutex // guards logs
	logs []*findingLog
}

// open starts the log of a new session of server.
func (ls *findingLogs) open(server string) *findingLog {
	l := &findingLog{server: server}
	ls.mu.Lock()
	ls.logs = append(ls.logs, l)
	ls.mu.Unlock()
	return l
}

// settleTimeout bounds the ping [findingLogs.settle] sends each session.
const settleTimeout = 5 * time.Second

// settle pings every session whose server still answers, concurrently, before the sessions
// close: on a stream transport the answer comes after whatever the server sent before it (a
// duplicate of the last answer), so the session reads that and reports it instead of closing
// over it. Errors are of no interest; a server without ping answers -32601 just as well.
func (ls *findingLogs) settle(ctx context.Context) {
	ls.mu.Lock()
	var live []*session.Session
	for _, l := range ls.logs {
		l.mu.Lock()
		if l.s != nil && l.responsive {
			live = append(live, l.s)
		}
		l.mu.Unlock()
	}
	ls.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range live {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pctx, cancel := context.WithTimeout(ctx, settleTimeout)
			defer cancel()
			_ = s.Ping(pctx)
		}()
	}
	wg.Wait()
}

// answered reports whether err leaves the server answering: no error, or one the server sent.
func answered(err error) bool {
	switch session.CategoryOf(err) {
	case "", session.ServerError, session.ProtocolError:
		return true
	}
	return false
}

// rest takes what no test took, once every session is closed.
func (ls *findingLogs) rest() []result.Finding {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	var out []result.Finding
	for _, l := range ls.logs {
		out = append(out, l.take()...)
	}
	return out
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
