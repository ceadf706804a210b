package runner_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/runner"
)

const basic = `
name: Basic
server: tcp://ADDR
tests:
  - id: echo
    call: echo
    with: {text: hello}
    expect:
      - contains: hello
  - id: add
    tool: add
    input: {a: 2, b: 3}
    assertions:
      - type: schema
      - {type: equals, path: $.structuredContent.sum, value: 5}
    extract:
      - {name: sum, path: $.structuredContent.sum}
  - id: uses-sum
    call: echo
    with: {text: "sum={{sum}}"}
    expect:
      - equals: {path: "$.content[0].text", value: "sum=5"}
  - id: wrong
    call: echo
    with: {text: hello}
    expect:
      - equals: {path: "$.content[0].text", value: bye}
  - id: tool-error
    call: error
    with: {message: disk full, as_tool: true}
    expectError: {message: disk full}
  - id: rpc-error
    call: error
    with: {message: boom, category: protocol}
    expectError: {code: -32603, message: boom}
  - id: unexpected-rpc-error
    call: error
    with: {message: boom, category: protocol}
  - id: unexpected-tool-error
    call: error
    with: {message: nope, as_tool: true}
  - id: read
    read: mcptest://static/hello.txt
    expect:
      - contains: Hello from mcptest
  - id: list
    list: tools
    expect:
      - contains: {path: "$.items[*].name", value: add}
`

func TestRunOutcomes(t *testing.T) {
	t.Parallel()
	srv := tcpServer(t, nil)
	col := parse(t, basic, nil, "ADDR", srv.Addr)
	rec := &recorder{}
	run, err := runCols(t, &runner.Options{OnEvent: rec.on}, col)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := map[string]result.Status{
		"echo": result.Passed, "add": result.Passed, "uses-sum": result.Passed, "wrong": result.Failed,
		"tool-error": result.Passed, "rpc-error": result.Passed, "unexpected-rpc-error": result.Errored,
		"unexpected-tool-error": result.Failed, "read": result.Passed, "list": result.Passed,
	}
	if d := cmp.Diff(want, statuses(run)); d != "" {
		t.Errorf("statuses (-want +got):\n%s", d)
	}
	if got := find(t, run, "add").Extracted["sum"]; got != "5" {
		t.Errorf("extracted sum = %q, want 5", got)
	}
	w := find(t, run, "wrong")
	if len(w.Failures) != 1 || w.Failures[0].Expected != `"bye"` || w.Failures[0].Line == 0 {
		t.Errorf("wrong: failures = %+v", w.Failures)
	}
	if e := find(t, run, "unexpected-rpc-error").Error; e == nil || e.Category != "ProtocolError" || e.Code != -32603 {
		t.Errorf("unexpected-rpc-error: error = %+v", e)
	}
	if r := find(t, run, "echo"); r.Request == "" || r.Response == "" || r.Latency <= 0 || len(r.Attempts) != 1 {
		t.Errorf("echo: request %q response %q latency %v attempts %d", r.Request, r.Response, r.Latency, len(r.Attempts))
	}
	c := run.Collections[0]
	if len(c.Servers) != 1 || c.Servers[0].ProtocolVersion == "" || c.Servers[0].ServerName != "mcptest" {
		t.Errorf("servers = %+v", c.Servers)
	}
	if len(c.Tools["default"]) < 5 {
		t.Errorf("tools snapshot = %d tools, want ≥ 5", len(c.Tools["default"]))
	}
	k := rec.kinds()
	if k[0] != "run-started" || k[1] != "collection-started" || k[len(k)-2] != "collection-finished" || k[len(k)-1] != "run-finished" {
		t.Errorf("events = %v", k)
	}
	if n := len(k); n != 4+2*len(want) {
		t.Errorf("got %d events, want %d: %v", n, 4+2*len(want), k)
	}
}
