//go:build linux

package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/analyze/audit"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// auditPeers are the official reference servers the audit is calibrated on, with the
// arguments they need.
func auditPeers(t *testing.T) []struct {
	pkg  string
	args []string
} {
	return []struct {
		pkg  string
		args []string
	}{
		{"@modelcontextprotocol/server-everything", []string{"stdio"}},
		{"@modelcontextprotocol/server-filesystem", []string{t.TempDir()}},
		{"@modelcontextprotocol/server-memory", nil},
		{"@modelcontextprotocol/server-sequential-thinking", nil},
	}
}

// TestAuditPassiveNeverCalls collects each reference server's metadata through the library and
// checks that a passive audit sends no tools/call, resources/read or prompts/get, and raises
// nothing above info.
func TestAuditPassiveNeverCalls(t *testing.T) {
	t.Parallel()
	for _, p := range auditPeers(t) {
		t.Run(filepath.Base(p.pkg), func(t *testing.T) {
			t.Parallel()
			peer := requireNodePeer(t, p.pkg)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			d, _, err := spec.Parse(spec.Join(append([]string{peer.node, peer.entry}, p.args...)), &spec.Options{Env: append(peerEnvExtra, "MEMORY_FILE_PATH="+filepath.Join(t.TempDir(), "memory.jsonl"))})
			if err != nil {
				t.Fatal(err)
			}
			log := newFrameLog()
			s := openStdioSession(t, ctx, d, &session.Options{OnFrame: log.hook, Roots: []session.Root{},
				SamplingReply: json.RawMessage(`{"role":"assistant","content":{"type":"text","text":""},"model":"x"}`), ElicitationReply: json.RawMessage(`{"action":"decline"}`)})
			meta, err := audit.Collect(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := audit.Run(ctx, []*audit.Metadata{meta}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range []string{"tools/call", "resources/read", "prompts/get"} {
				if n := log.count(m); n != 0 {
					t.Errorf("a passive audit sent %d %s", n, m)
				}
			}
			if len(meta.Tools) == 0 {
				t.Fatal("no tools listed")
			}
			for _, f := range rep.Findings {
				if f.Severity > audit.Info {
					t.Errorf("false alarm on a reference server: [%s] %s %s: %s", f.Severity, f.RuleID, f.Subject, f.Message)
				}
			}
			t.Logf("%s: %d tools, %d prompts, %d resources, %d findings (all info)", meta.Name, len(meta.Tools), len(meta.Prompts), len(meta.Resources), len(rep.Findings))
		})
	}
}

// TestAuditCLIAgainstReferenceServers runs the real `mcpspec audit` against each reference
// server: exit 0 at --fail-on low, JSON that says passive and lists no finding above info; the
// filesystem server also goes through a fenced active audit of its read-only tools, whose
// path containment must hold against the canary.
func TestAuditCLIAgainstReferenceServers(t *testing.T) {
	t.Parallel()
	requireNodePeer(t, "@modelcontextprotocol/server-everything")
	exe := buildMcpspec(t)
	run := func(t *testing.T, bound time.Duration, args ...string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		defer cancel()
		work := t.TempDir()
		marker := newMarker()
		cmd := exec.CommandContext(ctx, exe, append(args, "--format", "json", "--fail-on", "low", "--lockfile", filepath.Join(work, "tools.lock"))...)
		cmd.Dir = work
		cmd.Env = peerEnv(markerVar+"="+marker, "NO_COLOR=1", "MEMORY_FILE_PATH="+filepath.Join(work, "memory.jsonl"))
		cmd.WaitDelay = 5 * time.Second
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Errorf("mcpspec audit exited with %d, want 0\n%s\n%s", ee.ExitCode(), tail(stdout.Bytes(), 6000), tail(stderr.Bytes(), 2000))
		} else if err != nil {
			t.Fatal(err)
		}
		assertNoMarkedProcesses(t, marker)
		return stdout.Bytes()
	}
	check := func(t *testing.T, out []byte, mode string) {
		var rep struct {
			Mode     string          `json:"mode"`
			Findings []audit.Finding `json:"findings"`
			ExitCode int             `json:"exitCode"`
		}
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatalf("audit JSON: %v\n%s", err, tail(out, 2000))
		}
		if rep.Mode != mode || rep.ExitCode != 0 {
			t.Errorf("mode %q exitCode %d, want %s and 0", rep.Mode, rep.ExitCode, mode)
		}
		for _, f := range rep.Findings {
			if f.Severity > audit.Info {
				t.Errorf("[%s] %s %s: %s", f.Severity, f.RuleID, f.Subject, f.Message)
			}
		}
	}
	peers := auditPeers(t)
	for _, p := range peers {
		if p.pkg != filesystemPkg {
			continue
		}
		// The longest run of the package, registered first so that it starts first. It is
		// CPU-bound, not waiting: mcpspec's output rules (secrets, directives) read each of
		// the eight 1 MiB outputs of the exhaustion probes (5 s each measured on a 2-core
		// machine at load average 24); hence its own bound.
		t.Run(filepath.Base(p.pkg)+" active", func(t *testing.T) {
			t.Parallel()
			peer := requireNodePeer(t, p.pkg)
			server := spec.Join(append([]string{peer.node, peer.entry}, p.args...))
			check(t, run(t, activeAuditBound, "audit", "--server", server, "--mode", "active", "--allow-tools", "*", "--acknowledge-risk", "--timeout", "15s"), "active")
		})
	}
	for _, p := range peers {
		t.Run(filepath.Base(p.pkg), func(t *testing.T) {
			t.Parallel()
			peer := requireNodePeer(t, p.pkg)
			server := spec.Join(append([]string{peer.node, peer.entry}, p.args...))
			check(t, run(t, 120*time.Second, "audit", "--server", server), "passive")
		})
	}
}

// activeAuditBound bounds the active audit of server-filesystem (138 calls, eight of them
// with a 1 MiB argument whose error output echoes it).
const activeAuditBound = 5 * time.Minute
