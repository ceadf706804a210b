//go:build linux

package interop

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpspec/mcpspec/detect"
	"github.com/mcpspec/mcpspec/detect/deadlock"
	"github.com/mcpspec/mcpspec/detect/headofline"
	"github.com/mcpspec/mcpspec/detect/race"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// The detectors against the Node peers, which run in the loopback-only namespace the suite
// needs (see the README). Each stdio server runs in a directory of its own, by which the test
// finds, when it ends, any server process it started that is left.

// stdioOpener opens sessions to argv started as a child process (a fresh one per session).
func stdioOpener(t *testing.T, argv, env []string, dir string) *serverconn.Opener {
	t.Helper()
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = shellQuote(a)
	}
	return openerFor(func() (transport.Dialer, error) {
		d, _, err := spec.Parse(strings.Join(quoted, " "), &spec.Options{Transport: spec.Stdio, Env: env, Dir: dir})
		return d, err
	})
}

// noServerLeft fails when a process started by the test binary still runs in dir (the
// working directory given to the servers of one test).
func noServerLeft(t *testing.T, dir string) {
	t.Helper()
	for _, pid := range descendants(os.Getpid())[1:] {
		cwd, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "cwd"))
		if err == nil && cwd == dir {
			st, _ := readStat(pid)
			t.Errorf("server process %d (%s, state %s) still there after the detectors ended", pid, st.comm, st.state)
		}
	}
}

// writeTestFile writes a file or fails the test.
func writeTestFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDetectorsCleanOnEverything probes every tool of server-everything (its gzip tool, which
// fetches URLs, is left out twice: it is annotated openWorldHint, and skipped by name), over
// stdio and over Streamable HTTP. Its long-running operation takes 10s by default: slow by
// design, never a deadlock.
func TestDetectorsCleanOnEverything(t *testing.T) {
	p := requireNodePeer(t, everythingPkg)
	t.Parallel()
	skip := detect.Selection{Skip: []string{"gzip-file-as-resource"}}
	checks := detectorChecks{
		deadlock: &deadlock.Options{Select: skip},
		races: []race.Options{
			{Tool: "echo", Args: map[string]any{"message": "hello"}},
			{Tool: "get-sum", Args: map[string]any{"a": 1, "b": 2}},
			{Tool: "get-structured-content", Args: map[string]any{"location": "Chicago"}},
		},
		hol: &headofline.Options{SlowTool: "trigger-long-running-operation", SlowArgs: map[string]any{"duration": 0.5, "steps": 1},
			FastTool: "echo", FastArgs: map[string]any{"message": "x"}, Rounds: 3},
	}
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		runDetectorsClean(t, stdioOpener(t, []string{p.node, p.entry, "stdio"}, peerEnvExtra, dir), checks)
		noServerLeft(t, dir)
	})
	t.Run("streamableHttp", func(t *testing.T) {
		t.Parallel()
		srv := startHTTPPeer(t, p, "streamableHttp")
		http := checks
		// A network server is shared by every session: one tool keeps the probe short.
		http.deadlock = &deadlock.Options{Tool: "echo", Select: skip}
		runDetectorsClean(t, openerFor(func() (transport.Dialer, error) { return streamableDialer(t, srv.base+"/mcp"), nil }), http)
	})
}

// TestDetectorsCleanOnFilesystem probes server-filesystem on a tree of its own: every tool not
// annotated destructive (create_directory does create a directory there), a deterministic
// read, and a search over the tree as the slow call.
func TestDetectorsCleanOnFilesystem(t *testing.T) {
	p := requireNodePeer(t, filesystemPkg)
	t.Parallel()
	root := t.TempDir()
	writeTestFile(t, filepath.Join(root, "a.txt"), "hello\n")
	for i := range 20 {
		for j := range 20 {
			dir := filepath.Join(root, "tree", "d"+strconv.Itoa(i), "e"+strconv.Itoa(j))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			writeTestFile(t, filepath.Join(dir, "f.txt"), "x")
		}
	}
	op := stdioOpener(t, []string{p.node, p.entry, root}, peerEnvExtra, root)
	runDetectorsClean(t, op, detectorChecks{
		races: []race.Options{
			{Tool: "read_text_file", Args: map[string]any{"path": filepath.Join(root, "a.txt")}},
			{Tool: "list_directory", Args: map[string]any{"path": root}},
		},
		hol: &headofline.Options{SlowTool: "search_files", SlowArgs: map[string]any{"path": root, "pattern": "zzz"},
			FastTool: "list_allowed_directories", Rounds: 3},
		// The search must take 10× the fast call to tell; on a fast machine it may not.
		holMayBeInconclusive: true,
	})
	noServerLeft(t, root)
}

// TestDetectorsCleanOnMemory probes server-memory with its graph in a file of its own. Every
// tool reads the whole graph file, so none is much slower than another: head-of-line cannot
// tell, and says so rather than guess.
func TestDetectorsCleanOnMemory(t *testing.T) {
	p := requireNodePeer(t, memoryPkg)
	t.Parallel()
	dir := t.TempDir()
	env := append([]string{"MEMORY_FILE_PATH=" + filepath.Join(dir, "memory.jsonl")}, peerEnvExtra...)
	op := stdioOpener(t, []string{p.node, p.entry}, env, dir)
	runDetectorsClean(t, op, detectorChecks{
		races: []race.Options{
			// The identical-call check only: create_entities loses concurrent writes (a true bug of
			// server-memory: it loads, changes and saves its file across awaits with no lock), which
			// the lost-update form reports as a race (seen by hand too: 16 writes, 1 kept).
			{Tool: "create_entities", NoReadBack: true, Args: map[string]any{"entities": []any{map[string]any{"name": "Ada", "entityType": "person", "observations": []any{"wrote the first program"}}}}},
			{Tool: "search_nodes", Args: map[string]any{"query": "Ada"}},
		},
		hol:                  &headofline.Options{SlowTool: "read_graph", FastTool: "search_nodes", FastArgs: map[string]any{"query": "nobody"}, Rounds: 2},
		holMayBeInconclusive: true,
	})
	noServerLeft(t, dir)
}
