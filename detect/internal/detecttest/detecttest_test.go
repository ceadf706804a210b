package detecttest

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

type report struct{ text string }

func (r *report) WriteText(w io.Writer) error {
	_, err := io.WriteString(w, r.text)
	return err
}

// recorder is a testing.TB that records failures instead of stopping the test.
type recorder struct {
	testing.TB
	fatal, logs []string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Logf(f string, a ...any)   { r.logs = append(r.logs, f) }
func (r *recorder) Fatalf(f string, a ...any) { r.fatal = append(r.fatal, f) }

// TestRun checks that Run hands the detector the opener, the options and a deadline, and
// returns its report.
func TestRun(t *testing.T) {
	srv := mcptest.NewTCPServer(nil)
	t.Cleanup(srv.Close)
	op := Opener(t, "tcp://"+srv.Addr, session.Options{})
	if o := op.Options().Session; o.ConnectTimeout <= 0 {
		t.Errorf("connect timeout %v", o.ConnectTimeout)
	}
	r := Run(t, func(ctx context.Context, got *serverconn.Opener, o string) (*report, error) {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("no deadline")
		}
		if got != op || o != "opts" {
			t.Errorf("opener %p options %q", got, o)
		}
		s, err := got.Open(ctx)
		if err != nil {
			return nil, err
		}
		s.Close()
		return &report{"ok"}, nil
	}, op, "opts")
	if r.text != "ok" {
		t.Errorf("report %+v", r)
	}
}

// TestRunFailsOnError checks that a detector's error fails the test.
func TestRunFailsOnError(t *testing.T) {
	rec := &recorder{TB: t}
	Run(rec, func(context.Context, *serverconn.Opener, int) (*report, error) {
		return &report{}, errors.New("boom")
	}, nil, 0)
	if len(rec.fatal) == 0 || !strings.HasPrefix(rec.fatal[0], "Run:") {
		t.Errorf("fatal %q", rec.fatal)
	}
}
