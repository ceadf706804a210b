//go:build linux

package interop

import (
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
	// with dir a fresh directory of each run (nil: nothing). serve, when set, starts a server
	// of the test's own and returns its URL, the SPEC.
	spec  string
	serve func(t *testing.T) string
	env   func(dir string) []string
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
	t.Parallel()
	everything := requireNodePeer(t, "@modelcontextprotocol/server-everything")
	memory := requireNodePeer(t, "@modelcontextprotocol/server-memory")
	goBin := buildGoSDKEverything(t)

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
		// A server per run, as the npm peers have: the verbs run side by side.
		{name: "go-sdk everything", serve: func(t *testing.T) string { return serveGoSDKEverything(t, goBin) }, tool: "greet", args: `{"name":"x"}`},
	}
	// Every verb on every peer side by side; and each peer's generated collection, run by the
	// mcpspec binary from a directory of its own (mcpspec test saves its run under .mcpspec/
	// in its working directory).
	exe := buildMcpspec(t)
	for _, p := range peers {
		// Each peer's deadlock probe, the longest verb (about a minute on server-everything,
		// which waits out its slow tools), starts now rather than when its subtest gets one of
		// the package's parallel slots: queued behind the package's other tests it began last
		// and ended the run a minute after everything else. It mostly waits.
		deadlock := startCLI(t, healthyVerbBound, p.verbArgs(t, t.TempDir(), []string{"deadlock", "--quiet"})...)
		t.Run("verbs/"+p.name, func(t *testing.T) {
			t.Parallel()
			runHealthyVerbs(t, p, deadlock)
		})
		t.Run("test/"+p.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			col := filepath.Join(dir, "healthy.yaml")
			writeHealthyCollection(t, col, p, p.specFor(t), dir)
			runExample(t, exe, dir, "healthy.yaml of "+p.name, []string{"test", col, "--skip-load"})
		})
	}
}

// runHealthyVerbs runs each verb with its defaults against p, side by side (each its own
// subtest), and wants exit 0 from each. The deadlock probe was started by the caller: its
// subtest judges it.
func runHealthyVerbs(t *testing.T, p healthyPeer, deadlock func(*testing.T) cliRun) {
	dir := t.TempDir()
	// The longest first: parallel tests start in the order they are registered.
	verbs := [][]string{
		{"deadlock", "--quiet"},
		{"probe", "--quiet"},
		{"fuzz", "-n", "100", "--seed", "1", "--quiet"},
		{"tools"},
		{"call", p.tool, "--args", p.args},
		{"race", "--tool", p.tool, "--args", p.args, "--quiet"},
		{"load", "--duration", "3s", "--rate", "50/s", "--tool", p.tool, "--args", p.args, "--out", filepath.Join(dir, "runs"), "--progress", "off"},
		{"audit"},
		{"score"},
	}
	if p.holSlow != "" {
		verbs = append(verbs, []string{"head-of-line", "--slow-tool", p.holSlow, "--slow-args", p.holSlowArgs, "--fast-tool", p.tool, "--fast-args", p.args, "--quiet"})
	}
	for i, v := range verbs {
		t.Run(v[0], func(t *testing.T) {
			t.Parallel()
			var r cliRun
			if v[0] == "deadlock" {
				r = deadlock(t)
			} else {
				own := filepath.Join(dir, strconv.Itoa(i))
				if err := os.Mkdir(own, 0o700); err != nil {
					t.Fatal(err)
				}
				r = runCLI(t, healthyVerbBound, p.verbArgs(t, own, v)...)
			}
			if r.code != cli.ExitOK {
				t.Errorf("mcpspec %s: exit %d, want 0 (a false alarm on a healthy server)\nstdout: %.6000s\nstderr: %.3000s", v[0], r.code, r.stdout, r.stderr)
			}
		})
	}
}

// verbArgs is the command line of verb v (its name and flags) against p: its --server, and
// the --server-env p gives a server started with dir, a fresh directory of the run's.
func (p healthyPeer) verbArgs(t *testing.T, dir string, v []string) []string {
	args := []string{v[0], "--server", p.specFor(t)}
	if p.env != nil {
		for _, kv := range p.env(dir) {
			args = append(args, "--server-env", kv)
		}
	}
	return append(args, v[1:]...)
}

// writeHealthyCollection writes a minimal collection: the peer's harmless call, expected to
// succeed.
func writeHealthyCollection(t *testing.T, path string, p healthyPeer, spec, dir string) {
	t.Helper()
	var server string
	if strings.HasPrefix(spec, "http") {
		server = strconv.Quote(spec)
	} else {
		f := strings.Fields(spec)
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

// specFor is the --server SPEC of one run against p.
func (p healthyPeer) specFor(t *testing.T) string {
	if p.serve != nil {
		return p.serve(t)
	}
	return p.spec
}

// buildGoSDKEverything builds the Go SDK's example "everything" server (examples/server/
// everything, from the module cache) once per test binary (goBuild) and returns the binary.
func buildGoSDKEverything(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("go not on PATH: %v", err)
	}
	return goBuild(t, "github.com/modelcontextprotocol/go-sdk/examples/server/everything")
}

// serveGoSDKEverything serves the Go SDK's example "everything" server (bin) over Streamable
// HTTP on a loopback port until the test ends, and returns its URL.
func serveGoSDKEverything(t *testing.T, bin string) string {
	t.Helper()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	startListening(t, exec.Command(bin, "-http", addr), addr)
	return "http://" + addr
}
