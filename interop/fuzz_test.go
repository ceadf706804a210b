//go:build linux

package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/detect/fuzz"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// The protocol fuzzer raises no false alarm on servers written by others: the official Node
// reference servers and the Go SDK's conformance server. Every case family runs, seeded, and
// the tools they annotate destructive stay uncalled. These peers run inside a network
// namespace with only loopback (see the package documentation), so no tool reaches out.

// peerOpener is an opener for a stdio server started from argv with env.
func peerOpener(t *testing.T, argv, env []string) *serverconn.Opener {
	t.Helper()
	dial, info, err := serverconn.SpecDial(spec.Join(argv), &spec.Options{Env: env, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return serverconn.New(serverconn.Options{Info: info, Dial: dial,
		Session: session.Options{ConnectTimeout: 30 * time.Second, RequestTimeout: 20 * time.Second}})
}

// fuzzPeer runs the fuzzer against a stdio server started from argv with env. known, when
// set, names the findings that are real bugs of the peer, which the test logs instead of
// failing on.
func fuzzPeer(t *testing.T, argv, env []string, o *fuzz.Options, known func(*fuzz.Finding) string) *fuzz.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	rep, err := fuzz.Run(ctx, peerOpener(t, argv, env), o)
	if err != nil {
		t.Fatalf("fuzz: %v", err)
	}
	t.Logf("%s\noutcomes: %s; %d respawns; tools %v; skipped %v", rep.Summary(), rep.OutcomeLine(), rep.Respawns, rep.Tools, rep.Skipped)
	for _, f := range rep.Findings {
		if known != nil {
			if why := known(f); why != "" {
				t.Logf("known bug of the peer, found again: %s %s: %s (%s)", f.ID, f.Outcome, f.What, why)
				continue
			}
		}
		t.Errorf("false alarm %s %s [%s/%s] %s: %s\nsent: %.600s\nargs: %s\nstderr: %.1000s", f.ID, f.Outcome, f.Family, f.Kind, f.What, f.Detail,
			bytes.Join(f.Frames, []byte("\n")), f.Args, f.Stderr)
	}
	if rep.StoppedBy != "iterations" && rep.StoppedBy != "time" {
		t.Errorf("stopped by %s: %s", rep.StoppedBy, rep.Stopped)
	}
	return rep
}

func peerFuzzOptions(seed int64) *fuzz.Options {
	return &fuzz.Options{Iterations: 150, Seed: seed, Time: 4 * time.Minute, HangAfter: 10 * time.Second}
}

func TestFuzzNodePeers(t *testing.T) {
	t.Parallel()
	for _, p := range []struct {
		pkg  string
		args func(t *testing.T) []string
		env  func(t *testing.T) []string
	}{
		{"@modelcontextprotocol/server-everything", func(*testing.T) []string { return []string{"stdio"} }, nil},
		{"@modelcontextprotocol/server-filesystem", func(t *testing.T) []string { return []string{t.TempDir()} }, nil},
		{"@modelcontextprotocol/server-memory", nil, func(t *testing.T) []string {
			return []string{"MEMORY_FILE_PATH=" + filepath.Join(t.TempDir(), "memory.jsonl")}
		}},
	} {
		t.Run(filepath.Base(p.pkg), func(t *testing.T) {
			t.Parallel()
			peer := requireNodePeer(t, p.pkg)
			argv := []string{peer.node, peer.entry}
			if p.args != nil {
				argv = append(argv, p.args(t)...)
			}
			env := append([]string(nil), peerEnvExtra...)
			if p.env != nil {
				env = append(env, p.env(t)...)
			}
			rep := fuzzPeer(t, argv, env, peerFuzzOptions(21), nil)
			if rep.Cases < 50 || len(rep.Families) < 10 {
				t.Errorf("%d cases over %d families: too few to mean anything", rep.Cases, len(rep.Families))
			}
		})
	}
}

// goSDKResourceFrame is a resources/read whose unknown URI holds a NUL. The Go SDK v1.8.0
// formats its resource-not-found error data with Go's %q (mcp/resource.go,
// ResourceNotFoundError), which writes \x00 — not a JSON escape — so marshalling the answer
// fails and the server ends the session: a real crash the fuzzer finds.
const goSDKResourceFrame = `{"jsonrpc":"2.0","id":900001,"method":"resources/read","params":{"uri":"\u0000"}}`

// knownGoSDKBug recognises the Go SDK's crashes among findings: that one, and the process
// exiting 1 on a line that is not JSON (ioConn.Read returns the decode error, which ends the
// connection and server.Run; the conformance server then exits).
func knownGoSDKBug(f *fuzz.Finding) string {
	if f.Outcome == fuzz.Crash && strings.Contains(f.Detail, "the server process exited on a frame it may refuse") {
		return "Go SDK v1.8.0: a line that is not a JSON-RPC message ends the stdio connection, and the server process exits 1"
	}
	if f.Outcome != fuzz.Crash || len(f.Frames) != 1 || !bytes.Contains(f.Frames[0], []byte(`"resources/read"`)) ||
		!bytes.Contains(f.Frames[0], []byte(`\u00`)) {
		return ""
	}
	return "Go SDK v1.8.0: ResourceNotFoundError formats the URI with %q, an invalid JSON escape for a control character"
}

// TestFuzzGoSDKServer fuzzes the Go SDK's conformance server, its tools included (they are
// harmless; none is annotated). The SDK ends the connection and its process exits 1 on a line
// that is not JSON: the stdio rules let a server refuse such a frame, not die of it, so that is
// one crash finding (one per cause, however many cases showed it). It and the resource bug
// (see goSDKResourceFrame) are found on purpose, and tolerated in the seeded run.
func TestFuzzGoSDKServer(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the Go SDK's conformance server")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("go not on PATH: %v", err)
	}
	exe := goBuild(t, goConformanceServer)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	t.Run("seeded", func(t *testing.T) {
		o := peerFuzzOptions(22)
		o.IncludeDestructive = true
		rep := fuzzPeer(t, []string{exe}, nil, o, knownGoSDKBug)
		exits := 0
		for _, f := range rep.Findings {
			if strings.Contains(f.Detail, "the server process exited on a frame it may refuse") {
				exits++
			}
		}
		if exits != 1 {
			t.Errorf("%d findings for the SDK's exit on malformed lines, want one (%s)", exits, rep.OutcomeLine())
		}
	})
	t.Run("resource-not-found crash", func(t *testing.T) {
		c, err := peerOpener(t, []string{exe}, nil).Open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		v := fuzz.ReplayFrame(ctx, c.Session, []byte(goSDKResourceFrame), 10*time.Second)
		if v.Outcome != fuzz.Crash || !v.Bug() {
			t.Errorf("the Go SDK's resources/read with a NUL in the URI: %+v, want a crash", v)
		}
	})
}

// TestFuzzCLIAgainstMemory runs the real `mcpspec fuzz --json` against server-memory: exit 0,
// no finding, and no process left behind.
func TestFuzzCLIAgainstMemory(t *testing.T) {
	t.Parallel()
	peer := requireNodePeer(t, "@modelcontextprotocol/server-memory")
	exe := buildMcpspec(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	marker := newMarker()
	work := t.TempDir()
	cmd := exec.CommandContext(ctx, exe, "fuzz", "--server", spec.Join([]string{peer.node, peer.entry}), "--iterations", "60", "--seed", "23", "--json")
	cmd.Dir = work
	cmd.Env = peerEnv(markerVar+"="+marker, "NO_COLOR=1", "MEMORY_FILE_PATH="+filepath.Join(work, "memory.jsonl"))
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Errorf("mcpspec fuzz exited with %d, want 0\n%s\n%s", ee.ExitCode(), tail(stdout.Bytes(), 4000), tail(stderr.Bytes(), 2000))
	} else if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases        int `json:"cases"`
		FindingCount int `json:"findingCount"`
		ExitCode     int `json:"exitCode"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || doc.Cases != 60 || doc.FindingCount != 0 || doc.ExitCode != 0 {
		t.Errorf("JSON %+v (%v)\n%s", doc, err, tail(stdout.Bytes(), 2000))
	}
	assertNoMarkedProcesses(t, marker)
}
