package detecttest

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

// RunTimeout bounds one Run.
const RunTimeout = time.Minute

// Report is what a detector's Run returns: a report that writes itself as text.
type Report interface {
	WriteText(w io.Writer) error
}

// Opener returns an opener whose sessions dial spec (a SPEC as --server takes it) with the
// session options o; a zero ConnectTimeout becomes ten seconds.
func Opener(t testing.TB, spec string, o session.Options) *serverconn.Opener {
	t.Helper()
	dial, info, err := serverconn.SpecDial(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = 10 * time.Second
	}
	return serverconn.New(serverconn.Options{Info: info, Dial: dial, Session: o})
}

// Run runs a detector (its package's Run) against op with options o under RunTimeout, fails t
// when it returns an error and logs the report's text.
func Run[O any, R Report](t testing.TB, run func(context.Context, *serverconn.Opener, O) (R, error), op *serverconn.Opener, o O) R {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	r, err := run(ctx, op, o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Errorf("WriteText: %v", err)
	}
	t.Logf("report:\n%s", b.String())
	return r
}
