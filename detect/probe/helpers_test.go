package probe

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/testparallel"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// TestMain lets the test binary act as `mcpspec testserver`, so that a "testserver" SPEC
// starts it as a real child process over real stdio.
func TestMain(m *testing.M) {
	if len(os.Args) > 3 && os.Args[1] == "oddserver" {
		os.Exit(oddServer(os.Args[2], os.Args[3]))
	}
	if len(os.Args) > 1 && os.Args[1] == spec.BuiltinName {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		code := mcptest.RunCommand(ctx, os.Args[2:], os.Stdin, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	// The tests wait on servers and on the rows' watches far more than they compute (3.8 s of
	// CPU in 39 s of wall time for the reference and sloppy servers).
	testparallel.Raise(8)
	os.Exit(m.Run())
}

// probeSpec runs the probe against a SPEC ("testserver …" starts this test binary as the
// reference server) with short limits.
func probeSpec(t *testing.T, s string, so *spec.Options, o Options) *Report {
	t.Helper()
	if so == nil {
		so = &spec.Options{}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	so.Executable = exe
	dial, info, err := serverconn.SpecDial(s, so)
	if err != nil {
		t.Fatalf("SpecDial(%q): %v", s, err)
	}
	o.Server = serverconn.Options{Info: info, Dial: dial,
		Session: session.Options{ConnectTimeout: 10 * time.Second, RequestTimeout: 10 * time.Second,
			ProtocolVersion: o.Server.Session.ProtocolVersion}}
	if o.Header == nil {
		o.Header = so.Header
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := Run(ctx, &o)
	if err != nil {
		t.Fatalf("probe %s: %v", s, err)
	}
	return rep
}

func key(r Result) string {
	if r.Era == "" {
		return r.ID
	}
	return r.ID + "@" + string(r.Era)
}

// describeFailures lists the results that are not pass or n/a, with their evidence.
func describeFailures(rep *Report, strict bool) string {
	var b strings.Builder
	for _, r := range rep.Results {
		if r.Status == Fail || (strict && r.Status == Warn) {
			b.WriteString("\n" + key(r) + ": " + string(r.Status) + ": " + r.Message)
			for _, ev := range r.Evidence {
				b.WriteString("\n    " + ev.Dir + " " + ev.Text)
			}
		}
	}
	return b.String()
}

// byKey finds the result of key (id@era, or id for a row about the transport alone).
func byKey(rep *Report, k string) (Result, bool) {
	for _, r := range rep.Results {
		if key(r) == k {
			return r, true
		}
	}
	return Result{}, false
}

// oddServer is the reference server behind a filter of its stdin that meets tools/list with
// params that are null or an empty array (which, "null" or "array") with a fault: "crash"
// exits at once, "hang" stops reading (and so answering) for good, "drop" leaves that request
// unanswered.
func oddServer(fault, which string) int {
	trigger := `"method":"tools/list","params":[]`
	if which == "null" {
		trigger = `"method":"tools/list","params":null`
	}
	pr, pw := io.Pipe()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 64<<10), 32<<20)
		for sc.Scan() {
			if strings.Contains(sc.Text(), trigger) {
				switch fault {
				case "crash":
					os.Exit(3)
				case "drop":
					continue
				}
				<-ctx.Done()
				os.Exit(0)
			}
			if _, err := pw.Write(append(sc.Bytes(), '\n')); err != nil {
				return
			}
		}
		_ = pw.Close()
	}()
	return mcptest.RunCommand(ctx, nil, pr, os.Stdout, os.Stderr)
}
