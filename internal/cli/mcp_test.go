package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpTools are the tools `mcpspec mcp` offers.
var mcpTools = []string{"call_tool", "compare_runs", "deadlock", "fuzz", "head_of_line", "list_tools", "load", "probe", "race", "run_collection", "summarize_report"}

// mcpDir is a working directory with a tiny collection against testserver.
func mcpDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	col := "schemaVersion: \"1.0\"\nname: Tiny\nserver: testserver\ntests:\n  - name: Echo\n    call: echo\n    with: {text: hi}\n    expect:\n      - contains: hi\n"
	if err := os.WriteFile(filepath.Join(dir, "tiny.yaml"), []byte(col), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// mcpCall calls a tool and returns its result and structured output.
func mcpCall(t *testing.T, ctx context.Context, s *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out map[string]any
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s: structured content: %v", name, err)
		}
	}
	return res, out
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// checkMCPTools lists the tools and checks each has a strict inputSchema and an outputSchema.
func checkMCPTools(t *testing.T, ctx context.Context, s *mcp.ClientSession) {
	t.Helper()
	lt, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
		in, _ := json.Marshal(tl.InputSchema)
		out, _ := json.Marshal(tl.OutputSchema)
		var is, os map[string]any
		_ = json.Unmarshal(in, &is)
		_ = json.Unmarshal(out, &os)
		if is["type"] != "object" || is["additionalProperties"] == nil || is["additionalProperties"] == true {
			t.Errorf("%s: inputSchema is not strict: %s", tl.Name, in)
		}
		if req, _ := is["required"].([]any); len(req) == 0 {
			t.Errorf("%s: inputSchema requires nothing: %s", tl.Name, in)
		}
		if os["type"] != "object" || !strings.Contains(string(out), `"exitCode"`) {
			t.Errorf("%s: outputSchema = %s", tl.Name, out)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, mcpTools) {
		t.Errorf("tools = %v, want %v", names, mcpTools)
	}
}

// TestMCPServerStdio drives `mcpspec mcp` over stdio with the go-sdk client: the tools and their
// schemas, list_tools and call_tool on testserver, a tiny collection, a deadlock check, a race
// found (a verdict, not a tool error), and the
// refusals (a server outside the allowlist, a path outside the working directory, a bound).
func TestMCPServerStdio(t *testing.T) {
	t.Parallel()
	exe, err := exec.LookPath("mcpspec")
	if err != nil {
		t.Fatalf("mcpspec not installed by TestMain: %v", err)
	}
	dir := mcpDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.Command(exe, "mcp")
	cmd.Dir = dir
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpspec-test", Version: "1"}, nil)
	s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkMCPTools(t, ctx, s)

	res, out := mcpCall(t, ctx, s, "list_tools", map[string]any{"server": "testserver"})
	if res.IsError || out["exitCode"] != 0.0 || !strings.Contains(resultText(res), "echo") {
		t.Errorf("list_tools: isError=%v out=%v text=%q", res.IsError, out["exitCode"], resultText(res))
	}
	if rep, _ := out["report"].(map[string]any); rep == nil || rep["tools"] == nil {
		t.Errorf("list_tools: no tools in the report: %v", out)
	}

	res, out = mcpCall(t, ctx, s, "call_tool", map[string]any{"server": "testserver", "tool": "echo", "arguments": map[string]any{"text": "hello agent"}})
	if res.IsError || out["exitCode"] != 0.0 || !strings.Contains(resultText(res), "hello agent") {
		t.Errorf("call_tool: isError=%v exitCode=%v text=%q", res.IsError, out["exitCode"], resultText(res))
	}

	res, out = mcpCall(t, ctx, s, "run_collection", map[string]any{"path": "tiny.yaml"})
	if res.IsError || out["exitCode"] != 0.0 || !strings.Contains(resultText(res), "1 test: 1 passed") {
		t.Errorf("run_collection: isError=%v exitCode=%v text=%q stderr=%v", res.IsError, out["exitCode"], resultText(res), out["stderr"])
	}

	res, out = mcpCall(t, ctx, s, "deadlock", map[string]any{"server": "testserver", "tool": "echo", "arguments": map[string]any{"text": "x"}, "concurrency": 4, "maxSeconds": 30})
	if res.IsError || out["exitCode"] != 0.0 || !strings.Contains(resultText(res), "verdict clean") {
		t.Errorf("deadlock: isError=%v exitCode=%v text=%q stderr=%v", res.IsError, out["exitCode"], resultText(res), out["stderr"])
	}

	// A bounded load run, its run directory summarised and compared with itself; the results
	// file run_collection left (.mcpspec/runs/latest.json) summarised.
	res, out = mcpCall(t, ctx, s, "load", map[string]any{"server": "testserver", "tool": "echo", "arguments": map[string]any{"text": "x"}, "rate": 10, "durationSeconds": 1})
	m := regexp.MustCompile(`run directory: (\.mcpspec/mcp-runs/\S+)`).FindStringSubmatch(resultText(res))
	if res.IsError || out["exitCode"] != 0.0 || !strings.HasPrefix(resultText(res), "load passed: 10 requests") || m == nil {
		t.Fatalf("load: isError=%v exitCode=%v text=%q stderr=%v", res.IsError, out["exitCode"], resultText(res), out["stderr"])
	}
	res, _ = mcpCall(t, ctx, s, "summarize_report", map[string]any{"path": m[1]})
	if res.IsError || !strings.HasPrefix(resultText(res), "load passed: 10 requests") {
		t.Errorf("summarize_report of %s: isError=%v text=%q", m[1], res.IsError, resultText(res))
	}
	res, out = mcpCall(t, ctx, s, "compare_runs", map[string]any{"baseline": m[1], "current": m[1]})
	if res.IsError || out["exitCode"] != 0.0 || resultText(res) != "compare: no regression" {
		t.Errorf("compare_runs: isError=%v exitCode=%v text=%q stderr=%v", res.IsError, out["exitCode"], resultText(res), out["stderr"])
	}
	res, _ = mcpCall(t, ctx, s, "summarize_report", map[string]any{"path": ".mcpspec/runs/latest.json"})
	if res.IsError || !strings.HasPrefix(resultText(res), "1 test: 1 passed") {
		t.Errorf("summarize_report of a results file: isError=%v text=%q", res.IsError, resultText(res))
	}

	// A bug found is a verdict, not a tool error: outcome failed, exit 1.
	res, out = mcpCall(t, ctx, s, "race", map[string]any{"server": "testserver --divergent", "tool": "slow", "arguments": map[string]any{"milliseconds": 20}, "concurrency": 8})
	if res.IsError || out["exitCode"] != 1.0 || out["outcome"] != "failed" || !strings.Contains(resultText(res), "verdict race") {
		t.Errorf("race on a divergent server: isError=%v exitCode=%v outcome=%v text=%q", res.IsError, out["exitCode"], out["outcome"], resultText(res))
	}

	res, _ = mcpCall(t, ctx, s, "list_tools", map[string]any{"server": "sh -c 'echo pwned'"})
	if !res.IsError || !strings.Contains(resultText(res), "--allow FILE") {
		t.Errorf("a server outside the allowlist: isError=%v text=%q", res.IsError, resultText(res))
	}
	res, _ = mcpCall(t, ctx, s, "run_collection", map[string]any{"path": "../tiny.yaml"})
	if !res.IsError || !strings.Contains(resultText(res), `".."`) {
		t.Errorf("a path outside the working directory: isError=%v text=%q", res.IsError, resultText(res))
	}
	res, _ = mcpCall(t, ctx, s, "load", map[string]any{"server": "testserver", "tool": "echo", "rate": 5000})
	if !res.IsError || !strings.Contains(resultText(res), "maximum") {
		t.Errorf("a rate above the cap: isError=%v text=%q", res.IsError, resultText(res))
	}
	res, _ = mcpCall(t, ctx, s, "list_tools", map[string]any{"server": "testserver", "extra": true})
	if !res.IsError {
		t.Errorf("an unknown argument was accepted: %q", resultText(res))
	}
}

// TestMCPServerHTTP: `mcpspec mcp --transport http` prints a token on stderr; requests without
// it get 401, with a foreign Origin or Host 403; the go-sdk client with the token lists and calls
// the tools. A non-loopback --listen is refused (exit 3).
func TestMCPServerHTTP(t *testing.T) {
	t.Parallel()
	exe, err := exec.LookPath("mcpspec")
	if err != nil {
		t.Fatalf("mcpspec not installed by TestMain: %v", err)
	}
	dir := mcpDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	bad := exec.CommandContext(ctx, exe, "mcp", "--transport", "http", "--listen", "0.0.0.0:0")
	bad.Dir = dir
	if out, err := bad.CombinedOutput(); bad.ProcessState == nil || bad.ProcessState.ExitCode() != 3 || !strings.Contains(string(out), "not a loopback address") {
		t.Errorf("--listen 0.0.0.0:0: %v\n%s", err, out)
	}

	cmd := exec.Command(exe, "mcp", "--transport", "http")
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("mcpspec mcp did not stop within 10s of SIGINT")
			<-done
		}
	}()
	lines := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var url, token string
	for url == "" || token == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("mcpspec mcp ended before printing its URL and token")
			}
			if m := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+/mcp)$`).FindStringSubmatch(l); m != nil {
				url = m[1]
			}
			if m := regexp.MustCompile(`token ([0-9a-f]{64}) `).FindStringSubmatch(l); m != nil {
				token = m[1]
			}
		case <-ctx.Done():
			t.Fatal("no URL and token on stderr")
		}
	}
	go func() { // drain
		for range lines {
		}
	}()

	post := func(hdr map[string]string) int {
		req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			if k == "Host" {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	auth := "Bearer " + token
	for _, c := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"no token", nil, http.StatusUnauthorized},
		{"wrong token", map[string]string{"Authorization": "Bearer " + strings.Repeat("0", 64)}, http.StatusUnauthorized},
		{"foreign Origin", map[string]string{"Authorization": auth, "Origin": "https://evil.example"}, http.StatusForbidden},
		{"foreign Host", map[string]string{"Authorization": auth, "Host": "evil.example"}, http.StatusForbidden},
	} {
		if got := post(c.hdr); got != c.want {
			t.Errorf("%s: status %d, want %d", c.name, got, c.want)
		}
	}

	hc := &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpspec-test", Version: "1"}, nil)
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkMCPTools(t, ctx, s)
	res, out := mcpCall(t, ctx, s, "call_tool", map[string]any{"server": "testserver", "tool": "echo", "arguments": map[string]any{"text": "over http"}})
	if res.IsError || out["exitCode"] != 0.0 || !strings.Contains(resultText(res), "over http") {
		t.Errorf("call_tool: isError=%v exitCode=%v text=%q", res.IsError, out["exitCode"], resultText(res))
	}
}

// bearer adds an Authorization header to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}
