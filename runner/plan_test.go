package runner_test

import (
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/runner"
)

func TestPlan(t *testing.T) {
	t.Parallel()
	col := parse(t, `
name: Plan
servers:
  app: "{{spec}}"
  ref: {transport: testserver, args: [--seed, x], protocolVersion: "2025-06-18"}
  spare: {url: "http://127.0.0.1:9/mcp", headers: {Authorization: "Bearer {{secret.TOKEN}}"}}
variables: {spec: "/nonexistent/server --port 1"}
defaults: {server: app}
tests:
  - id: second
    dependsOn: [first]
    call: echo
    with: {text: "{{token}}"}
  - id: first
    call: login
    extract: [{name: token, path: $.structuredContent.token}]
  - id: skipped
    call: echo
    skip: not today
  - id: on-ref
    server: ref
    dependsOn: [second]
    read: mcptest://static/hello.txt
  - id: other
    list: tools
deadlock: {server: ref, concurrent: 2}
`, &collection.LoadOptions{LookupEnv: func(k string) (string, bool) { return "s3cret-token", k == "TOKEN" }})
	plan := runner.New(nil).Plan([]*collection.Collection{col})
	cp := plan.Collections[0]
	var got []string
	for _, pt := range cp.Tests {
		got = append(got, pt.ID)
	}
	// second waits for first (it uses first's extracted token); skipped settles in the first
	// scan; on-ref waits for second.
	if d := cmp.Diff([]string{"first", "skipped", "second", "on-ref", "other"}, got); d != "" {
		t.Errorf("start order (-want +got):\n%s", d)
	}
	if cp.Tests[0].Order != 1 || cp.Tests[1].Order != 0 || cp.Tests[1].Skip != "not today" || cp.Tests[4].Order != 4 {
		t.Errorf("orders: %+v", cp.Tests)
	}
	if d := cmp.Diff([]string{"first"}, cp.Tests[2].DependsOn); d != "" {
		t.Errorf("dependsOn: %s", d)
	}
	servers := map[string]runner.PlannedServer{}
	for _, s := range cp.Servers {
		servers[s.Name] = s
	}
	if s := servers["app"]; s.Transport != "stdio" || s.Target != "/nonexistent/server --port 1" || !s.Used {
		t.Errorf("app server: %+v", s)
	}
	if s := servers["ref"]; s.ProtocolVersion != "2025-06-18" || !s.Used || s.Description == "" {
		t.Errorf("ref server: %+v", s)
	}
	if s := servers["spare"]; s.Used || s.Transport != "http" {
		t.Errorf("spare server: %+v", s)
	}
	if d := cmp.Diff([]runner.PlannedBlock{{Kind: "deadlock", Server: "ref"}}, cp.Blocks); d != "" {
		t.Errorf("blocks: %s", d)
	}

	filtered := runner.New(&runner.Options{Grep: regexp.MustCompile("^on-ref$")}).Plan([]*collection.Collection{col}).Collections[0]
	got = nil
	for _, pt := range filtered.Tests {
		got = append(got, pt.ID)
	}
	if d := cmp.Diff([]string{"first", "second", "on-ref"}, got); d != "" || filtered.Unselected != 2 || len(filtered.Blocks) != 0 {
		t.Errorf("--grep plan: %v, unselected %d, blocks %v (%s)", got, filtered.Unselected, filtered.Blocks, d)
	}
}
