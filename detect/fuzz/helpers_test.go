package fuzz

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// testserver returns an opener for the reference server run as a child process (this test
// binary, see TestMain) with the given flags.
func testserver(t testing.TB, flags string) *serverconn.Opener {
	t.Helper()
	return openerFor(t, "testserver "+flags, &spec.Options{Executable: os.Args[0]})
}

// closerServer returns an opener for the `closer MODE` server of TestMain.
func closerServer(t testing.TB, mode string) *serverconn.Opener {
	t.Helper()
	return openerFor(t, spec.Join([]string{os.Args[0], "closer", mode}), nil)
}

// lateCrashServer returns an opener for the `latecrash` server of TestMain.
func lateCrashServer(t testing.TB) *serverconn.Opener {
	t.Helper()
	return openerFor(t, spec.Join([]string{os.Args[0], "latecrash"}), nil)
}

// openerFor returns an opener for any SPEC, with short limits.
func openerFor(t testing.TB, s string, so *spec.Options) *serverconn.Opener {
	t.Helper()
	dial, info, err := serverconn.SpecDial(s, so)
	if err != nil {
		t.Fatalf("SpecDial(%q): %v", s, err)
	}
	return serverconn.New(serverconn.Options{Info: info, Dial: dial,
		Session: session.Options{ConnectTimeout: 15 * time.Second, RequestTimeout: 10 * time.Second}})
}

// run fuzzes op under a bounded context.
func fuzzRun(t testing.TB, op Opener, o *Options) *Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := Run(ctx, op, o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return rep
}

// findings returns the findings of rep with the given outcome.
func findings(rep *Report, o Outcome) []*Finding {
	var out []*Finding
	for _, f := range rep.Findings {
		if f.Outcome == o {
			out = append(out, f)
		}
	}
	return out
}
