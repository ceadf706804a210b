package mcptest_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport/stdio"
)

// openStdio runs `testserver args` as a child process (the test binary, see TestMain) and opens
// mcpspec's client on it over stdio, detecting the era as `mcpspec call --server` does.
func openStdio(t *testing.T, args string) *session.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitFor)
	defer cancel()
	d := stdio.Command{Path: os.Args[0], Args: []string{"-test.run=^$"}, Env: []string{helperEnv + "=" + args}}
	s, err := session.Open(ctx, d, &session.Options{RequestTimeout: waitFor})
	if err != nil {
		t.Fatalf("open session on testserver %s: %v", args, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestCommandTasksEra checks what a first-time user of `testserver --tasks` gets: without
// --era the server serves the legacy era only, so a client that detects the era speaks
// 2025-11-25 and job runs as a task (with its progress, over real stdio); --era both keeps the
// stateless era, where job is unknown and the error says why; --era stateless is refused.
func TestCommandTasksEra(t *testing.T) {
	t.Run("tasks imply the legacy era", func(t *testing.T) {
		t.Parallel()
		s := openStdio(t, "--tasks")
		if v := s.ProtocolVersion(); v != mcptest.LatestLegacyVersion {
			t.Fatalf("negotiated %s, want %s", v, mcptest.LatestLegacyVersion)
		}
		var (
			mu  sync.Mutex
			got []session.Progress
		)
		res, err := s.CallTool(t.Context(), "job", map[string]any{"milliseconds": 100},
			&session.CallOptions{OnProgress: func(p session.Progress) { mu.Lock(); got = append(got, p); mu.Unlock() }})
		if err != nil {
			t.Fatalf("job: %v", err)
		}
		if text := firstText(t, res); text != "job done after 100ms" {
			t.Errorf("job result %q", text)
		}
		mu.Lock()
		defer mu.Unlock()
		// One ordered connection: every step's progress comes before the task's end is seen.
		if len(got) != 10 || got[9].Progress != 10 || got[9].Total != 10 || !strings.Contains(got[9].Message, "100 of 100 ms") {
			t.Errorf("progress %+v, want 10 steps of 10 ending with 100 of 100 ms", got)
		}
	})

	t.Run("explicit both keeps the stateless era", func(t *testing.T) {
		t.Parallel()
		s := openStdio(t, "--tasks --era both")
		if v := s.ProtocolVersion(); v == mcptest.LatestLegacyVersion {
			t.Fatalf("negotiated %s, want the stateless era (the client detects it)", v)
		}
		_, err := s.CallTool(t.Context(), "job", map[string]any{"milliseconds": 1}, nil)
		var e *session.Error
		if !errors.As(err, &e) || e.Code != mcptest.CodeInvalidParams || !strings.Contains(e.Message, "only in 2025-11-25 sessions") {
			t.Errorf("job in the stateless era: %v, want -32602 saying job exists only in 2025-11-25 sessions", err)
		}
	})

	t.Run("stateless is refused", func(t *testing.T) {
		var stderr bytes.Buffer
		code := mcptest.RunCommand(t.Context(), []string{"--tasks", "--era", "stateless"}, strings.NewReader(""), io.Discard, &stderr)
		msg := strings.TrimSpace(stderr.String())
		if code != mcptest.ExitConfig || strings.Contains(msg, "\n") || !strings.Contains(msg, "--tasks needs 2025-11-25 sessions") {
			t.Errorf("exit %d, stderr %q: want 3 and one line saying --tasks needs 2025-11-25 sessions", code, msg)
		}
	})

	t.Run("help says so", func(t *testing.T) {
		var help strings.Builder
		if code := mcptest.RunCommand(t.Context(), []string{"-h"}, strings.NewReader(""), io.Discard, &help); code != mcptest.ExitOK {
			t.Fatalf("-h: exit %d", code)
		}
		if h := help.String(); !strings.Contains(h, "legacy with --tasks") || !strings.Contains(h, "without --era this serves the legacy era only") {
			t.Errorf("-h does not say --tasks implies the legacy era:\n%s", h)
		}
	})

	t.Run("library refuses stateless", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if s, err := mcptest.StartServer(l, &mcptest.Options{Tasks: true, Era: mcptest.EraStateless}); err == nil {
			s.Close()
			t.Errorf("StartServer accepted Tasks with the stateless era")
		} else if !strings.Contains(err.Error(), "2025-11-25") {
			t.Errorf("StartServer: %v, want the reason", err)
		}
	})
}
