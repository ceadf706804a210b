package cli

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/session"
)

// findingList collects what a server sent that answered no request (session findings: a
// second answer, an id never issued, a frame nobody waited for), for call, tools and inspect
// to show.
type findingList struct {
	mu    sync.Mutex // guards list and shown
	list  []session.Finding
	shown int // how many were printed already
}

func (l *findingList) add(f session.Finding) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list = append(l.list, f)
}

// all returns every finding so far.
func (l *findingList) all() []session.Finding {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]session.Finding(nil), l.list...)
}

// fresh returns the findings not printed yet and marks them printed.
func (l *findingList) fresh() []session.Finding {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]session.Finding(nil), l.list[l.shown:]...)
	l.shown = len(l.list)
	return out
}

// printFindings warns about findings on w (stderr): they are bugs of the server even when the
// command succeeded.
func printFindings(w io.Writer, fs []session.Finding) {
	if len(fs) == 0 {
		return
	}
	fmt.Fprintf(w, "Warning: the server sent %s that answered no request:\n", textfmt.Plural(len(fs), "message"))
	for _, f := range fs {
		fmt.Fprintf(w, "  %s: %s\n", f.Category, oneLine(f.Message))
		if len(f.Frame) > 0 {
			fmt.Fprintf(w, "    frame: %s\n", truncate(oneLine(string(f.Frame)), 200))
		}
	}
	fmt.Fprintln(w, "Hint: a bug in the server (a second answer, an id never issued, a frame nobody waited for); 'mcpspec test --strict' fails the tests it happens in")
}

// findingJSON is a finding in --json output.
type findingJSON struct {
	Category session.Category `json:"category"`
	Message  string           `json:"message"`
	Frame    string           `json:"frame,omitempty"`
}

func findingsJSON(fs []session.Finding) []findingJSON {
	var out []findingJSON
	for _, f := range fs {
		out = append(out, findingJSON{Category: f.Category, Message: f.Message, Frame: string(f.Frame)})
	}
	return out
}

// settleTimeout bounds the ping settle sends before a session closes.
const settleTimeout = 5 * time.Second

// settle pings a server that still answers before its session closes: on a stream transport
// the answer comes after whatever the server sent before it (a second answer to the last
// call), so the session reads that and reports it rather than closing over it. The ping's
// own outcome is of no interest.
func settle(ctx context.Context, s *session.Session, lastErr error) {
	switch session.CategoryOf(lastErr) {
	case "", session.ServerError, session.ProtocolError:
	default:
		return // the server is gone, stuck or was interrupted: nothing to wait for
	}
	if ctx.Err() != nil {
		return
	}
	pctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	_ = s.Ping(pctx)
}
