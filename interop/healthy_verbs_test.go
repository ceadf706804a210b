//go:build linux

package interop

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/cli"
)

// healthyVerbBound bounds one verb's run against a healthy peer (server-everything's deadlock
// probe waits out its 10 s tool twice: about a minute).
const healthyVerbBound = 150 * time.Second

// healthyPeer is a published server nobody here wrote, run the way a user would.
type healthyPeer struct {
	name string
	// spec is the --server SPEC; env(dir) is added to a server mcpspec starts (--server-env),
	// with dir a fresh directory of each run (nil: nothing).
	spec string
	env  func(dir string) []string
	// tool and args are a harmless call for call, race, load and the generated collection.
	tool, args string
	// hol is head-of-line's slow call ("" when the server has none: the check would say
	// inconclusive, exit 3, rightly, so it is not run).
	holSlow, holSlowArgs string
}

// TestHealthyPeersPassEveryVerb runs every verb with its defaults against published servers
// that are healthy (server-everything and server-memory over stdio, the Go SDK's example
// "everything" server over Streamable HTTP) and wants exit 0 from each: a verb that fails
// here is a false alarm. Destructive and open-world tools are left alone by the detectors'
// defaults (server-everything's gzip-file-as-resource, server-memory's delete_*).
func TestHealthyPeersPassEveryVerb(t *testing.T) {
	everything := requireNodePeer(t, "@modelcontextprotocol/server-everything")
	memory := requireNodePeer(t, "@modelcontextprotocol/server-memory")
	goURL := startGoSDKEverything(t)

	peers := []healthyPeer{
		{name: "server-everything", spec: everything.node + " " + everything.entry + " stdio",
			env:  func(string) []string { return peerEnvExtra },
			tool: "echo", args: `{"message":"x"}`,
			holSlow: "trigger-long-running-operation", holSlowArgs: `{"duration":1,"steps":1}`},
		{name: "server-memory", spec: memory.node + " " + memory.entry,
			// Each verb starts on an empty graph, as a user's first run would: what one verb
			// wrote (the fuzzer's huge entities) would make the next read_graph slow.
			env:  func(dir string) []string { return []string{"MEMORY_FILE_PATH=" + filepath.Join(dir, "memory.jsonl")} },
			tool: "read_graph", args: `{}`},
		{name: "go-sdk everything", spec: goURL, tool: "greet", args: `{"name":"x"}`},
	}
	// The verbs, the peers side by side; then each peer's generated collection, from a
	// directory of its own (mcpspec test saves its run under .mcpspec/ in the working one).
	t.Run("verbs", func(t *testing.T) {
		for _, p := range peers {
			t.Run(p.name, func(t *testing.T) {
				t.Parallel()
				runHealthyVerbs(t, p)
			})
		}
	})
	for _, p := range peers {
		t.Run("test/"+p.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			col := filepath.Join(dir, "healthy.yaml")
			writeHealthyCollection(t, col, p, dir)
			r := runCLI(t, healthyVerbBound, "test", col, "--skip-load")
			if r.code != cli.ExitOK {
				t.Errorf("mcpspec test: exit %d, want 0\nstdout: %.4000s\nstderr: %.3000s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// runHealthyVerbs runs each verb with its defaults against p and wants exit 0.
func runHealthyVerbs(t *testing.T, p healthyPeer) {
	dir := t.TempDir()
	verbs := [][]string{
		{"tools"},
		{"call", p.tool, "--args", p.args},
		{"deadlock", "--quiet"},
		{"race", "--tool", p.tool, "--args", p.args, "--quiet"},
		{"fuzz", "-n", "100", "--seed", "1", "--quiet"},
		{"probe", "--quiet"},
		{"load", "--duration", "3s", "--rate", "50/s", "--tool", p.tool, "--args", p.args, "--out", filepath.Join(dir, "runs"), "--progress", "off"},
		{"audit"},
		{"score"},
	}
	if p.holSlow != "" {
		verbs = append(verbs, []string{"head-of-line", "--slow-tool", p.holSlow, "--slow-args", p.holSlowArgs, "--fast-tool", p.tool, "--fast-args", p.args, "--quiet"})
	}
	for i, v := range verbs {
		args := []string{v[0], "--server", p.spec}
		if p.env != nil {
			own := filepath.Join(dir, strconv.Itoa(i))
			if err := os.Mkdir(own, 0o700); err != nil {
				t.Fatal(err)
			}
			for _, kv := range p.env(own) {
				args = append(args, "--server-env", kv)
			}
		}
		r := runCLI(t, healthyVerbBound, append(args, v[1:]...)...)
		if r.code != cli.ExitOK {
			t.Errorf("mcpspec %s: exit %d, want 0 (a false alarm on a healthy server)\nstdout: %.6000s\nstderr: %.3000s", v[0], r.code, r.stdout, r.stderr)
		}
	}
}

// writeHealthyCollection writes a minimal collection: the peer's harmless call, expected to
// succeed.
func writeHealthyCollection(t *testing.T, path string, p healthyPeer, dir string) {
	t.Helper()
	var server string
	if strings.HasPrefix(p.spec, "http") {
		server = strconv.Quote(p.spec)
	} else {
		f := strings.Fields(p.spec)
		var env []string
		var kvs []string
		if p.env != nil {
			kvs = p.env(dir)
		}
		for _, kv := range kvs {
			k, v, _ := strings.Cut(kv, "=")
			env = append(env, fmt.Sprintf("%s: %s", k, strconv.Quote(v)))
		}
		quoted := make([]string, len(f)-1)
		for i, a := range f[1:] {
			quoted[i] = strconv.Quote(a)
		}
		server = fmt.Sprintf("{command: %s, args: [%s], env: {%s}}", strconv.Quote(f[0]), strings.Join(quoted, ", "), strings.Join(env, ", "))
	}
	doc := fmt.Sprintf("name: healthy\nserver: %s\ntests:\n  - id: call\n    call: %s\n    with: %s\n    expect: [{isError: false}]\n", server, p.tool, p.args)
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
}

// startGoSDKEverything builds the Go SDK's example "everything" server (examples/server/
// everything, from the module cache) and serves it over Streamable HTTP on a loopback port.
func startGoSDKEverything(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go not on PATH: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "go-everything")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, goTool, "build", "-o", bin, "github.com/modelcontextprotocol/go-sdk/examples/server/everything").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	startListening(t, exec.Command(bin, "-http", addr), addr)
	return "http://" + addr
}
