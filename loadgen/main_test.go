package loadgen

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/testparallel"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// TestMain lets the test binary act as `mcpspec testserver FLAGS…` (first argument
// "testserver"), so tests load the reference server as a real child process whose crashes
// are real exits.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "testserver" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		code := mcptest.RunCommand(ctx, os.Args[2:], os.Stdin, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	// The long tests drive load runs of a few seconds against child servers at a few hundred
	// calls per second: they wait far more than they compute, so let them overlap.
	testparallel.Raise(6)
	os.Exit(m.Run())
}

// processServer returns the options of the reference server with flags, run as a child
// process (this test binary, see TestMain).
func processServer(t testing.TB, flags string) serverconn.Options {
	t.Helper()
	dial, info, err := serverconn.SpecDial("testserver "+flags, &spec.Options{Executable: os.Args[0]})
	if err != nil {
		t.Fatalf("SpecDial: %v", err)
	}
	return serverconn.Options{Info: info, Dial: dial,
		Session: session.Options{ConnectTimeout: 15 * time.Second, RequestTimeout: 10 * time.Second}}
}
