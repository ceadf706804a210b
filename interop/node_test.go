//go:build linux

package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/poll"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport"
)

// The Node peers: how to find them, start them and make sure they are gone afterwards.
// Linux only: the tests run in a network namespace and check processes through /proc.

// interopEnv is the switch that turns the Node peer tests on.
const interopEnv = "MCPSPEC_INTEROP"

// startWait bounds how long a Node server may take to start listening.
const startWait = 20 * time.Second

// nodePeer is a Node MCP server installed by npm ci under node_modules.
type nodePeer struct {
	// node is the node executable.
	node string
	// entry is the server's bin script (dist/index.js), from its package.json.
	entry string
}

// requireNodePeer skips unless MCPSPEC_INTEROP=1, then fails when node or the package is missing.
func requireNodePeer(t *testing.T, pkg string) nodePeer {
	t.Helper()
	if os.Getenv(interopEnv) != "1" {
		t.Skipf("set %s=1 to run the Node interop peers (after: cd interop && npm ci)", interopEnv)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("%s=1 but node is not on PATH: %v", interopEnv, err)
	}
	dir, err := filepath.Abs(filepath.Join("node_modules", filepath.FromSlash(pkg)))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatalf("%s=1 but %s is not installed (%v): run `cd interop && npm ci`", interopEnv, pkg, err)
	}
	var meta struct {
		Version string            `json:"version"`
		Bin     map[string]string `json:"bin"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil || len(meta.Bin) != 1 {
		t.Fatalf("%s/package.json: want exactly one bin entry (%v)", pkg, err)
	}
	var entry string
	for _, v := range meta.Bin {
		entry = filepath.Join(dir, filepath.FromSlash(v))
	}
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("%s: bin %s: %v: run `cd interop && npm ci`", pkg, entry, err)
	}
	t.Logf("%s %s: %s", pkg, meta.Version, entry)
	return nodePeer{node: node, entry: entry}
}

// peerEnvExtra is added to every Node peer's environment: the guard that stops
// server-everything's gzip tool from fetching anything but loopback.
var peerEnvExtra = []string{"GZIP_ALLOWED_DOMAINS=127.0.0.1"}

// peerEnv is the whole environment of a Node peer we start ourselves: ours, minus proxies and
// a stray PORT, plus peerEnvExtra and extra.
func peerEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "GZIP_ALLOWED_DOMAINS", "PORT":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, peerEnvExtra...)
	return append(env, extra...)
}

// loopbackPreload is the Node preload that binds port-only listen() calls to 127.0.0.1.
func loopbackPreload(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("loopback.cjs")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// httpPeer is a Node server running an HTTP transport on 127.0.0.1.
type httpPeer struct {
	// base is http://127.0.0.1:<port>.
	base string
}

// startHTTPPeer runs `node --require loopback.cjs <entry> <args…>` with PORT set to a free
// loopback port, waits until the port accepts connections and stops the process group when
// the test ends, asserting that no process of it remains.
func startHTTPPeer(t *testing.T, p nodePeer, args ...string) httpPeer {
	t.Helper()
	port := freePort(t)
	logPath := filepath.Join(t.TempDir(), "server.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(p.node, append([]string{"--require", loopbackPreload(t), p.entry}, args...)...)
	cmd.Env = peerEnv("PORT=" + strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", p.entry, err)
	}
	pid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		stopGroup(t, pid, exited)
		if t.Failed() {
			if b, err := os.ReadFile(logPath); err == nil {
				t.Logf("server output:\n%s", tail(b, 4000))
			}
		}
	})

	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	awaitListening(t, p.entry, addr, exited, logPath)
	return httpPeer{base: "http://" + addr}
}

// awaitListening waits up to startWait until addr accepts connections, failing the test with
// the server's log when the server (whose Wait result exited carries) ends first.
func awaitListening(t *testing.T, name, addr string, exited chan error, logPath string) {
	t.Helper()
	if !poll.Within(startWait, func() bool {
		select {
		case err := <-exited:
			exited <- err // stopGroup reads it again
			b, _ := os.ReadFile(logPath)
			t.Fatalf("%s exited before listening on %s: %v\n%s", name, addr, err, tail(b, 4000))
		default:
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false
		}
		_ = c.Close()
		return true
	}) {
		t.Fatalf("%s did not listen on %s within %v", name, addr, startWait)
	}
}

// stopGroup ends process group pgid (SIGTERM, then SIGKILL after 5s), waits for its leader and
// asserts that no member of the group is left.
func stopGroup(t *testing.T, pgid int, exited <-chan error) {
	t.Helper()
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			t.Errorf("process %d did not exit after SIGKILL", pgid)
			return
		}
	}
	// The leader is reaped; any other member would still be in the group.
	if left := groupMembers(pgid); len(left) > 0 {
		t.Errorf("processes of group %d still running after its leader exited: %+v", pgid, left)
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	assertGone(t, pgid)
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// procStat is the part of /proc/<pid>/stat the checks need.
type procStat struct {
	pid, ppid, pgrp int
	state           string
	comm            string
}

// readStat parses /proc/<pid>/stat.
func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	// comm is in parentheses and may contain spaces; the fields after the last ')' are fixed.
	s := string(b)
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open {
		return procStat{}, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(s[closing+1:])
	if len(f) < 3 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	st := procStat{pid: pid, comm: s[open+1 : closing], state: f[0]}
	st.ppid, _ = strconv.Atoi(f[1])
	st.pgrp, _ = strconv.Atoi(f[2])
	return st, nil
}

// allProcs lists every process visible in /proc.
func allProcs() []procStat {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []procStat
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := readStat(pid); err == nil {
			out = append(out, st)
		}
	}
	return out
}

// groupMembers lists the processes of group pgid.
func groupMembers(pgid int) []procStat {
	var out []procStat
	for _, st := range allProcs() {
		if st.pgrp == pgid {
			out = append(out, st)
		}
	}
	return out
}

// descendants lists pid and every process below it.
func descendants(pid int) []int {
	children := map[int][]int{}
	for _, st := range allProcs() {
		children[st.ppid] = append(children[st.ppid], st.pid)
	}
	out := []int{pid}
	for i := 0; i < len(out) && i < 10000; i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// assertGone fails the test when pid still exists, running or as an unreaped zombie.
func assertGone(t *testing.T, pid int) {
	t.Helper()
	st, err := readStat(pid)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		t.Errorf("process %d: %v", pid, err)
		return
	}
	if st.state == "Z" {
		t.Errorf("process %d (%s) exited but was never reaped (zombie)", pid, st.comm)
		return
	}
	t.Errorf("process %d (%s) still running, state %s", pid, st.comm, st.state)
}

// tail returns the last n bytes of b.
func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// openStdioSession opens a session on a stdio dialer and, when the test ends, closes it and
// asserts that the server process and every process it started are gone: Close must stop the
// whole tree.
func openStdioSession(t *testing.T, ctx context.Context, d transport.Dialer, opts *session.Options) *session.Session {
	t.Helper()
	s, err := session.Open(ctx, d, opts)
	if err != nil {
		t.Fatalf("session.Open: %v", err)
	}
	proc, ok := s.Conn().(transport.Process)
	if !ok {
		_ = s.Close()
		t.Fatalf("stdio connection %T does not implement transport.Process", s.Conn())
	}
	pid := proc.PID()
	if pid <= 0 {
		t.Errorf("stdio connection reports PID %d", pid)
	}
	t.Cleanup(func() {
		tree := descendants(pid)
		if err := s.Close(); err != nil {
			t.Errorf("session.Close: %v", err)
		}
		for _, p := range tree {
			assertGone(t, p)
		}
		if t.Failed() {
			t.Logf("server stderr (tail):\n%s", proc.StderrTail())
		}
	})
	return s
}
