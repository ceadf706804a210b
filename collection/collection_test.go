package collection

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mcpspec/mcpspec/assert"
)

// env is a fixed process environment for tests.
func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestSeedForms(t *testing.T) {
	simple, err := Load("testdata/seed-simple.yaml", nil)
	if err != nil {
		t.Fatalf("simple: %v", err)
	}
	srv := simple.Servers[DefaultServerName]
	if diff := cmp.Diff([]string{"npx", "@modelcontextprotocol/server-filesystem", "/tmp"}, append([]string{srv.Command}, srv.Args...)); diff != "" {
		t.Errorf("simple server (-want +got):\n%s", diff)
	}
	if srv.Transport != TransportStdio || len(simple.Tests) != 2 {
		t.Fatalf("simple: transport %q, %d tests", srv.Transport, len(simple.Tests))
	}
	first := simple.Tests[0]
	if tc, ok := first.Step.(*ToolCall); !ok || tc.Tool != "read_file" || tc.Input["path"] != "/tmp/test.txt" {
		t.Errorf("simple step = %#v", first.Step)
	}
	if first.ID != "read-a-file" || len(first.Assertions) != 1 || first.Assertions[0].Spec.Type != "exists" || first.Assertions[0].Spec.Path != "$.content" {
		t.Errorf("simple first test = %+v", first)
	}
	if simple.Tests[1].ExpectError == nil {
		t.Error("expectError: true not decoded")
	}

	adv, err := Load("testdata/seed-advanced.yaml", &LoadOptions{Vars: map[string]string{"userId": "7"}})
	if err != nil {
		t.Fatalf("advanced: %v", err)
	}
	s := adv.Servers[DefaultServerName]
	if s.Name != "my-server" || s.Command != "npx" || s.Env["NODE_ENV"] != "test" ||
		s.Timeouts.Connect != 10*time.Second || s.Timeouts.Call != 30*time.Second {
		t.Errorf("advanced server = %+v", s)
	}
	if adv.Environment != "dev" || len(adv.Environments) != 2 {
		t.Errorf("environment = %q of %d", adv.Environment, len(adv.Environments))
	}
	tt := adv.Tests[0]
	if tt.ID != "test-1" || tt.Timeout != 5*time.Second || tt.Retries != 2 || !cmp.Equal(tt.Tags, []string{"smoke", "api"}) {
		t.Errorf("advanced test = %+v", tt)
	}
	var types []string
	for _, a := range tt.Assertions {
		types = append(types, a.Spec.Type)
	}
	if diff := cmp.Diff([]string{"schema", "exists", "latency"}, types); diff != "" {
		t.Errorf("assertions (-want +got):\n%s", diff)
	}
	if tt.Assertions[2].Spec.Max != time.Second || tt.Assertions[0].Pos.Line != 39 {
		t.Errorf("latency %s at line %d", tt.Assertions[2].Spec.Max, tt.Assertions[0].Pos.Line)
	}
	if len(tt.Extract) != 1 || tt.Extract[0].Name != "userName" || tt.Extract[0].Path.String() != "$.name" {
		t.Errorf("extract = %+v", tt.Extract)
	}
	in, err := adv.Vars().ExpandMap(tt.Step.(*ToolCall).Input)
	if err != nil || in["id"] != int64(7) { // --var userId=7 is a number, as in an environment block
		t.Errorf("expanded input = %v, %v", in, err)
	}
	// The same file without userId is an undefined variable, positioned.
	_, err = Load("testdata/seed-advanced.yaml", nil)
	wantErrors(t, err, `seed-advanced.yaml:36:11: undefined variable "userId" in test "test-1"`)
}

// wantErrors checks that err is an ErrorList whose lines contain each want, in order.
func wantErrors(t *testing.T, err error, wants ...string) {
	t.Helper()
	var el ErrorList
	if !errors.As(err, &el) {
		t.Fatalf("err = %v (%T), want an ErrorList", err, err)
	}
	if !errors.Is(err, ErrInvalid) {
		t.Error("error list does not match ErrInvalid")
	}
	text := err.Error()
	for _, w := range wants {
		i := strings.Index(text, w)
		if i < 0 {
			t.Errorf("errors lack %q:\n%s", w, text)
			continue
		}
		text = text[i+len(w):]
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		opts *LoadOptions
		want []string
	}{
		{"unknown key with hint", `
name: x
server: testserver
tests:
  - name: Get user
    call: echo
    asserts: []
`, nil, []string{`x.yaml:7:5: unknown key "asserts" in test "Get user" (did you mean "assertions"?)`}},
		{"several errors at once", `
server: testserver
tests:
  - name: a
    call: echo
    timeout: soon
  - name: b
    call: echo
    retries: "2"
  - name: c
    call: echo
    expect:
      - equal: {path: $.x, value: 1}
`, nil, []string{
			`x.yaml:6:14: test "a" timeout: "soon" is not a duration`,
			`x.yaml:9:14: test "b" retries must be an integer, got string "2"`,
			`x.yaml:13:9: test "c" expect: unknown assertion type "equal" (did you mean "equals"?)`}},
		{"syntax error", "server: testserver\ntests:\n  - name: a\n    call: [b\n", nil, []string{"x.yaml:", "YAML syntax error"}},
		// yaml.v3 numbers parser errors from 0: each must name the line of the problem.
		{"unclosed flow mapping names its line", "server: testserver\ntests:\n  - name: a\n    call: echo\n    expect:\n      - equals: {path: $.a[0], value: 1}\n", nil, []string{"x.yaml:6:24: YAML syntax error: did not find expected ',' or '}' (quote the JSONPath: inside { } or [ ] YAML reads its [ ] and , as syntax; write \"$.a[0]\")"}},
		{"unquoted JSONPath in an extract flow map", "server: testserver\ntests:\n  - {name: a, call: echo, extract: {t: $.content[0].text}}\n", nil, []string{`x.yaml:3:40: YAML syntax error: did not find expected ',' or '}' (quote the JSONPath`, `write "$.content[0].text")`}},
		{"unclosed flow sequence names its line", "server: testserver\ntests:\n  - name: a\n    with: [a, b\n    call: echo\n", nil, []string{"x.yaml:4: YAML syntax error: did not find expected ',' or ']'"}},
		{"bad indentation names its line", "server: testserver\ntests:\n- name: a\n  call: echo\n bad\n", nil, []string{"x.yaml:5: YAML syntax error: did not find expected key"}},
		{"parser error on line 1", "{server: [testserver}\n", nil, []string{"x.yaml:1: YAML syntax error: did not find expected ',' or ']'"}},
		{"scanner error keeps its line", "server: testserver\ntests:\n  - name: a\n    call: echo: x\n", nil, []string{"x.yaml:4: YAML syntax error: mapping values are not allowed"}},
		{"two documents", "server: testserver\ntests: [{name: a, call: b}]\n---\nname: two\n", nil, []string{"one YAML document"}},
		{"empty", "", nil, []string{"collection is empty (a collection needs at least a server and tests"}},
		{"only a comment", "# nothing yet\n", nil, []string{"collection is empty"}},
		{"tab indentation", "server: testserver\ntests:\n\t- name: a\n\t  call: echo\n", nil, []string{"x.yaml:3:1: YAML syntax error: a tab in the indentation (YAML indents with spaces only"}},
		{"tab after the dash", "server: testserver\ntests:\n  -\tname: a\n", nil, []string{"x.yaml:3:4: YAML syntax error: a tab in the indentation"}},
		{"binary", "server: testserver\ntests: []\nx: \xff\xfe", nil, []string{"x.yaml:3:4: not a text file: the byte at line 3, column 4 is not UTF-8 text (a collection is a YAML text file in UTF-8"}},
		{"NUL byte", "server: testserver\x00", nil, []string{"x.yaml:1:19: not a text file"}},
		{"UTF-16", "\xff\xfes\x00e\x00", nil, []string{"x.yaml:1:1: not a text file"}},
		{"no server", "tests: [{name: a, call: b}]", nil, []string{"defines no server"}},
		{"alias", "server: testserver\nx: &a 1\ntests: [{name: a, call: b}]", nil, []string{"x.yaml:2:4: YAML anchors"}},
		{"custom tag", "server: testserver\ntests: [{name: a, call: b, with: {x: !!binary aGk=}}]", nil, []string{"YAML tag !!binary"}},
		{"schema output on a read step", "server: testserver\ntests: [{name: a, read: \"x://y\", expect: [{schema: output}]}]", nil, []string{`x.yaml:2:52: test "a" expect: a schema assertion without an inline schema checks a tool's structuredContent against its outputSchema; a read step has none`}},
		{"bare number is milliseconds, quoted too", "server: testserver\ntests: [{name: a, call: b, timeout: \"500\", expect: [{latency: 400}]}, {name: c, call: b, timeout: 500, expect: [{latency: \"1_000\"}]}]", nil, []string{`test "c": latency bound 1s is not below the test timeout 500ms`}},
		{"duration not a duration", "server: testserver\ntests: [{name: a, call: b, timeout: \"500 apples\"}]", nil, []string{`"500 apples" is not a duration (write a duration with a unit`}},
		{"bare integer duration ok but negative", "server: testserver\ntests: [{name: a, call: b, timeout: -5}]", nil, []string{"must be positive"}},
		{"duplicate ids", `
server: testserver
tests:
  - {id: t1, name: a, call: b}
  - {id: t1, name: c, call: d}
`, nil, []string{`x.yaml:5:5: duplicate test id "t1" (first at line 4)`}},
		{"unknown dependency", `
server: testserver
tests:
  - {id: login, name: a, call: b}
  - {id: t2, name: c, call: d, dependsOn: [logn]}
`, nil, []string{`depends on unknown test "logn" (did you mean "login"?)`}},
		{"cycle", `
server: testserver
tests:
  - {id: a, call: x, dependsOn: [c]}
  - {id: b, call: x, dependsOn: [a]}
  - {id: c, call: x, dependsOn: [b]}
`, nil, []string{"dependency cycle: a → c → b → a"}},
		{"variable extracted later needs dependsOn", `
server: testserver
tests:
  - {id: a, call: echo, with: {text: "{{tok}}"}}
  - {id: b, call: x, extract: [{name: tok, path: $.x}]}
`, nil, []string{`undefined variable "tok" in test "a" ("tok" is extracted by test "b", which does not run before this one; add it to dependsOn)`}},
		{"undefined env", `
server: testserver
tests:
  - {id: a, call: echo, with: {text: "{{env.HOME_DIR}} {{secret.API_TOKEN}}"}}
`, &LoadOptions{LookupEnv: env(map[string]string{"API_TOKEN": "abcdef"})}, []string{"environment variable HOME_DIR is not set"}},
		{"undefined variable suggests", `
server: testserver
variables: {userId: 1}
tests:
  - {id: a, call: echo, with: {text: "{{userid}}"}}
`, nil, []string{`undefined variable "userid" in test "a" (did you mean "userId"?)`}},
		{"unknown environment", "server: testserver\nenvironments: {dev: {variables: {}}}\ntests: [{id: a, call: b}]", &LoadOptions{Environment: "prd"}, []string{`environment "prd" is not defined in the collection (defined: dev)`}},
		{"unknown environment, close", "server: testserver\nenvironments: {dev: {variables: {}}}\ntests: [{id: a, call: b}]", &LoadOptions{Environment: "deb"}, []string{`(did you mean "dev"?)`}},
		{"environment but none defined", "server: testserver\ntests: [{id: a, call: b}]", &LoadOptions{Environment: "ci"}, []string{`environment "ci" is not defined in the collection (the collection defines no environments`}},
		{"bad defaultEnvironment", "server: testserver\nenvironments: {dev: {}}\ndefaultEnvironment: prod\ntests: [{id: a, call: b}]", nil, []string{`defaultEnvironment "prod" is not defined`}},
		{"timeout hierarchy server", `
server: {command: x, timeouts: {call: 30s}}
defaults: {timeout: 20s}
tests: [{id: a, call: b}]
`, nil, []string{`server "default" call timeout 30s is not below defaults.timeout 20s`}},
		{"timeout hierarchy latency", `
server: testserver
tests:
  - id: a
    call: b
    timeout: 1s
    expect: [{latency: 2s}]
`, nil, []string{`latency bound 2s is not below the test timeout 1s`}},
		{"bad regexp positioned", `
server: testserver
tests:
  - id: a
    call: b
    expect:
      - matches: "(open"
`, nil, []string{`x.yaml:7:18: test "a" expect: matches assertion: invalid regular expression`}},
		{"bad expr", "server: testserver\ntests: [{id: a, call: b, assertions: [{type: expr, expr: \"1 + \"}]}]", nil, []string{"expr assertion"}},
		{"field not for type", "server: testserver\ntests: [{id: a, call: b, assertions: [{type: exists, path: $.x, value: 1}]}]", nil, []string{`unknown key "value" in test "a" assertions exists assertion`}},
		{"two steps", "server: testserver\ntests: [{id: a, call: b, read: c}]", nil, []string{"more than one step: call, read"}},
		{"no step", "server: testserver\ntests: [{id: a}]", nil, []string{"has no step"}},
		{"type mismatch", "server: testserver\ntests: [{id: a, type: read, tool: b}]", nil, []string{`type "read" does not match step key "tool"`}},
		{"with on prompt", "server: testserver\ntests: [{id: a, prompt: p, with: {}}]", nil, []string{`"with" is only used with a tool step`}},
		{"bad list", "server: testserver\ntests: [{id: a, list: tool}]", nil, []string{`cannot list "tool"`, `did you mean "tools"?`}},
		{"unknown server", "servers: {a: testserver, b: testserver}\ntests: [{id: a, call: b, server: c}]", nil, []string{`server "c" is not defined`}},
		{"ambiguous server", "servers: {a: testserver, b: testserver}\ntests: [{id: a, call: b}]", nil, []string{"names no server and the collection has several"}},
		{"stdio without command", "server: {transport: stdio}\ntests: [{id: a, call: b}]", nil, []string{"a stdio server needs a command"}},
		{"http without url", "server: {transport: http}\ntests: [{id: a, call: b}]", nil, []string{"a http server needs a url"}},
		{"unknown transport", "server: {transport: grpc, url: x}\ntests: [{id: a, call: b}]", nil, []string{`unknown transport "grpc"`}},
		{"unterminated quote", "server: 'node \"x'\ntests: [{id: a, call: b}]", nil, []string{"unterminated"}},
		{"too deep", "server: testserver\ntests: [{id: a, call: b, with: {a: {b: {c: {d: {e: {f: {g: {h: {i: {j: {k: 1}}}}}}}}}}}}]", nil, []string{"nests deeper than 10 levels"}},
		{"too many tests", "server: testserver\ntests: [{id: a, call: b}, {id: c, call: d}, {id: e, call: f}]", &LoadOptions{MaxTests: 2}, []string{"too many tests: 3 (the limit is 2)"}},
		{"too large", "server: testserver\ntests: [{id: a, call: b}]\n# " + strings.Repeat("x", 200), &LoadOptions{MaxFileSize: 100}, []string{"larger than 100 bytes (split the tests over several files"}},
		{"too large in MiB", "server: testserver\ntests: [{id: a, call: b}]\n# " + strings.Repeat("x", 2<<20), nil, []string{"x.yaml: collection is larger than 1 MiB"}},
		{"maxMessageSize without unit name", "server: {command: x, maxMessageSize: 64 lots}\ntests: [{id: a, call: b}]", nil, []string{`x.yaml:1:38: server "default" maxMessageSize: "64 lots" is not a size`}},
		{"maxMessageSize too small", "server: {command: x, maxMessageSize: 100}\ntests: [{id: a, call: b}]", nil, []string{`maxMessageSize: 100 is outside 1.0 KiB … 1.0 GiB`}},
		{"maxMessageSize too large", "server: {command: x, maxMessageSize: 2GiB}\ntests: [{id: a, call: b}]", nil, []string{`maxMessageSize: 2GiB is outside`}},
		{"maxMessageSize a list", "server: {command: x, maxMessageSize: [1]}\ntests: [{id: a, call: b}]", nil, []string{`maxMessageSize must be a size, got`}},
		{"nan", "server: testserver\ntests: [{id: a, call: b, with: {x: .nan}}]", nil, []string{"not a finite number"}},
		{"reserved block validated", "server: testserver\ntests: [{id: a, call: b}]\nload: {duration: 10s, concurent: 5}", nil, []string{`unknown key "concurent" in load (did you mean "concurrent"?)`}},
		{"load mix unknown test", "server: testserver\ntests: [{id: a, call: b}]\nload: {mix: [{test: z}]}", nil, []string{`load.mix: unknown test "z"`}},
		{"load resources two sources", "server: testserver\ntests: [{id: a, call: b}]\nload: {resources: {serverPid: 7, metricsUrl: http://h/m}}", nil, []string{`load.resources: serverPid and metricsUrl are exclusive, give one`}},
		{"run threshold under a tool", "server: testserver\ntests: [{id: a, call: b}]\nload: {thresholds: {tools: {b: {p99: 1s, memoryGrowthMb: 5}}}}", nil,
			[]string{`thresholds.tools.b.memoryGrowthMb applies to the whole run, not to one tool`}},
		{"race needs tool", "server: testserver\nrace: {concurrent: 5}", nil, []string{"race needs a tool"}},
		{"deadlock input without tool", "server: testserver\ndeadlock: {input: {a: 1}}", nil, []string{"deadlock.input without deadlock.tool"}},
		{"head-of-line needs both tools", "server: testserver\nhead-of-line: {slowTool: slow}", nil, []string{"head-of-line needs a fastTool"}},
		{"block names an unknown server", "servers: {a: testserver, b: testserver}\ndefaults: {server: a}\nrace: {server: c, tool: echo}", nil, []string{`race: unknown server "c"`}},
		{"block without a default server", "servers: {a: testserver, b: testserver}\ndeadlock: {tool: echo}", nil, []string{"deadlock names no server and the collection has several"}},
		{"race ignore path", "server: testserver\nrace: {tool: echo, ignore: [time]}", nil, []string{`race.ignore: JSONPath "time" must start with "$"`}},
		{"schemaVersion", "schemaVersion: \"2.0\"\nserver: testserver\ntests: [{id: a, call: b}]", nil, []string{`unsupported schemaVersion "2.0"`}},
		{"unquoted schemaVersion", "schemaVersion: 1.0\nserver: testserver\ntests: [{id: a, call: b}]", nil, []string{`schemaVersion must be a string, got float 1.0 (quote it: "1.0")`}},
		{"extract bad path", "server: testserver\ntests: [{id: a, call: b, extract: [{name: x, path: name}]}]", nil, []string{`must start with "$"`}},
		{"shorthand with two keys", "server: testserver\ntests: [{id: a, call: b, expect: [{exists: $.a, equals: {path: $.b, value: 1}}]}]", nil, []string{"exactly one key"}},
		{"shorthand scalar for mapping-only type", "server: testserver\ntests: [{id: a, call: b, expect: [{equals: 5}]}]", nil, []string{"equals takes a mapping"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse("x.yaml", []byte(tc.doc), tc.opts)
			if c != nil {
				t.Fatalf("loaded a collection, want errors %q", tc.want)
			}
			wantErrors(t, err, tc.want...)
		})
	}
}

func TestLoadAllFailsWhole(t *testing.T) {
	dir := t.TempDir()
	good := "server: testserver\ntests: [{id: a, call: echo}]\n"
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.yml"), []byte("tests: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("ignored"), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, err := LoadAll([]string{dir}, nil)
	if cs != nil {
		t.Fatalf("LoadAll returned %d collections despite a broken file", len(cs))
	}
	wantErrors(t, err, "b.yml:", "YAML syntax error")
	if err := os.Remove(filepath.Join(dir, "b.yml")); err != nil {
		t.Fatal(err)
	}
	cs, err = LoadAll([]string{dir}, nil)
	if err != nil || len(cs) != 1 {
		t.Fatalf("LoadAll = %d, %v", len(cs), err)
	}
	if _, err := LoadAll([]string{filepath.Join(dir, "missing.yaml")}, nil); err == nil || errors.Is(err, ErrInvalid) {
		t.Errorf("missing file: err = %v, want an I/O error", err)
	}
}

func TestSteps(t *testing.T) {
	doc := `
servers:
  ref: testserver --hang-first-call
  web: {url: "http://127.0.0.1:8080/mcp", headers: {Authorization: "Bearer s3cr3t-token"}}
  sock: ws://127.0.0.1:9/ws
  old: {transport: sse, url: "http://127.0.0.1:8080/sse"}
  raw: tcp://127.0.0.1:7000
  cmd: {command: "python -m 'my server'", cwd: srv}
defaults: {server: ref, retries: 1, tags: [all]}
tests:
  - {id: t, call: add, with: {a: 1, b: 2.5}, server: web}
  - {id: r, read: "mcptest://static/hello.txt"}
  - {id: p, prompt: greet, arguments: {name: Ada, n: 3}}
  - {id: l, list: templates}
  - {id: c, complete: {ref: {type: resource, uri: "mcptest://items/{id}"}, argument: {name: id, value: "4"}}}
  - {id: q, request: {method: tools/call, params: {name: echo}, notification: false}, skip: not today}
  - {id: n, type: request, request: {method: notifications/roots/list_changed, notification: true}, skip: true}
`
	c, err := Parse("steps.yaml", []byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, tt := range c.Tests {
		got[tt.ID] = tt.Step
	}
	want := map[string]any{
		"t": &ToolCall{Tool: "add", Input: map[string]any{"a": int64(1), "b": 2.5}},
		"r": &ReadResource{URI: "mcptest://static/hello.txt"},
		"p": &GetPrompt{Name: "greet", Arguments: map[string]string{"name": "Ada", "n": "3"}},
		"l": &List{What: "templates"},
		"c": &Complete{RefType: "ref/resource", RefName: "mcptest://items/{id}", ArgName: "id", ArgValue: "4"},
		"q": &Request{Method: "tools/call", Params: map[string]any{"name": "echo"}},
		"n": &Request{Method: "notifications/roots/list_changed", Notification: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if c.Test("l").Step.(*List).ListMethod() != "resources/templates/list" {
		t.Error("templates list method")
	}
	if tt := c.Test("t"); tt.Server != "web" || tt.Retries != 1 || !cmp.Equal(tt.Tags, []string{"all"}) || tt.Kind() != assert.KindTool {
		t.Errorf("t = %+v", tt)
	}
	if c.Test("r").Server != "ref" || c.Test("q").Skip != "not today" || c.Test("n").Skip == "" {
		t.Error("defaults or skip not applied")
	}
	servers := map[string][2]string{}
	for name, s := range c.Servers {
		servers[name] = [2]string{s.Transport, s.Command + s.URL + strings.Join(s.Args, ",")}
	}
	wantServers := map[string][2]string{
		"ref":  {TransportTestServer, "--hang-first-call"},
		"web":  {TransportHTTP, "http://127.0.0.1:8080/mcp"},
		"sock": {TransportWS, "ws://127.0.0.1:9/ws"},
		"old":  {TransportSSE, "http://127.0.0.1:8080/sse"},
		"raw":  {TransportTCP, "tcp://127.0.0.1:7000"},
		"cmd":  {TransportStdio, "python-m,my server"},
	}
	if diff := cmp.Diff(wantServers, servers); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	if got := c.Masker.Mask("auth: Bearer s3cr3t-token"); got != "auth: ***" {
		t.Errorf("header secret not masked: %q", got)
	}
}

func TestVars(t *testing.T) {
	doc := `
server: testserver
variables: {level: defaults, count: 3, only: d, apiKey: "k-123456"}
environments:
  dev: {variables: {level: env, fromEnv: e}}
defaultEnvironment: dev
tests:
  - id: a
    call: echo
    with: {text: "{{level}}", n: "{{count}}", s: "n={{count}}", tok: "{{secret.TOKEN}}", h: "{{env.HOME}}", lit: "\\{{x}}"}
    extract: [{name: level, path: $.x}]
  - id: b
    call: echo
    with: {text: "{{level}} {{only}} {{fromEnv}} {{file}} {{cli}}"}
`
	opts := &LoadOptions{
		LookupEnv: env(map[string]string{"TOKEN": "tok-abcdef", "HOME": "/home/u"}),
		EnvFile:   map[string]string{"level": "file", "file": "f"},
		Vars:      map[string]string{"level": "cli", "cli": "c"},
	}
	c, err := Parse("v.yaml", []byte(doc), opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Test("b").Requires; !cmp.Equal(got, []string{"a"}) {
		t.Errorf("b requires %v, want [a] (it uses level, which a extracts)", got)
	}
	v := c.Vars()
	in, err := v.ExpandMap(c.Test("a").Step.(*ToolCall).Input)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"text": "cli", "n": int64(3), "s": "n=3", "tok": "tok-abcdef", "h": "/home/u", "lit": "{{x}}"}
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("expanded (-want +got):\n%s", diff)
	}
	v.Set("level", "extracted")
	s, err := v.ExpandString(c.Test("b").Step.(*ToolCall).Input["text"].(string))
	if err != nil || s != "extracted d e f c" {
		t.Errorf("precedence: %q, %v", s, err)
	}
	if c.Vars().Values()["level"] != "cli" {
		t.Error("Set leaked into the collection's base scope")
	}
	v.Set("sessionToken", "zzzz-9999")
	masked := v.Masker().Mask("tok-abcdef k-123456 zzzz-9999 /home/u")
	if masked != "*** *** *** /home/u" {
		t.Errorf("masked = %q", masked)
	}
	if _, err := v.ExpandString("{{nope}}"); !errors.As(err, new(*UndefinedError)) {
		t.Errorf("undefined: %v", err)
	}
	// A checker expands templated expectations through Vars.
	spec := &assert.Spec{Type: "equals", Path: "$.t", Value: "{{level}}", Keys: []string{"type", "path", "value"}}
	chk, err := assert.Builtins().Compile(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	sub, _ := assert.NewSubject(assert.KindTool, []byte(`{"t":"extracted"}`))
	sub.Vars = v
	if f := chk.Check(context.Background(), sub); f != nil {
		t.Errorf("templated equals: %+v", f)
	}
}

func TestMasker(t *testing.T) {
	m := NewMasker()
	m.Add("abc") // too short: ignored
	m.Add("secret")
	m.Add("secret-longer")
	if got := m.Mask("abc secret secret-longer"); got != "abc *** ***" {
		t.Errorf("Mask = %q", got)
	}
	for name, want := range map[string]bool{"API_KEY": true, "apiToken": true, "Password": true, "client_secret": true, "user": false, "count": false} {
		if IsSecretName(name) != want {
			t.Errorf("IsSecretName(%q) = %v", name, !want)
		}
	}
}

func TestReservedBlocks(t *testing.T) {
	doc := `
server: testserver
tests: [{id: add, call: add, with: {a: 1, b: 2}}]
load:
  scenario: spike
  duration: 60s
  concurrent: 50
  rate: 200
  warmup: 5s
  spike: {baselineConcurrent: 5, spikeConcurrent: 50, baselineDuration: 10s, spikeAt: 30s, spikeDuration: 5s}
  mix: [{test: add, weight: 2}]
  toolCalls: [{tool: echo, input: {text: hi}, weight: 0.3}]
  thresholds: {p50: 100ms, p99: 500ms, errorRate: 0.01, hangTimeout: 5s, memoryGrowthMb: 50, leakKbPerCall: 2, leakSlopeMbPerSec: 0.5, tools: {echo: {p95: 50ms}}}
  resources: {cgroup: /sys/fs/cgroup/mcp.slice, sampleInterval: 500ms, leakMinCalls: 2000}
deadlock: {tool: add, concurrent: 20, hangThreshold: 5s, gracePeriod: 10s}
race: {tool: echo, input: {text: x}, concurrent: 8, rounds: 2, ignore: [$.meta]}
head-of-line: {slowTool: slow, slowInput: {milliseconds: 300}, fastTool: echo, slowConcurrent: 2, threshold: 3}
fuzz: {iterations: 50, seed: 7, payloads: [huge-frame]}
probe: {checks: [missing-fields], timeout: 2s}
`
	c, err := Parse("r.yaml", []byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Load.Scenario != "spike" || c.Load.Rate != 200 || c.Load.Spike.SpikeAt != 30*time.Second ||
		c.Load.Mix[0].Weight != 2 || c.Load.ToolCalls[0].Input["text"] != "hi" || c.Load.Thresholds.P99 != 500*time.Millisecond {
		t.Errorf("load = %+v", c.Load)
	}
	if th := c.Load.Thresholds; th.HangTimeout != 5*time.Second || th.LeakKBPerCall != 2 || th.LeakSlopeMBPerSec != 0.5 || th.Tools["echo"].P95 != 50*time.Millisecond {
		t.Errorf("load.thresholds = %+v", th)
	}
	if r := c.Load.Resources; r == nil || r.Cgroup != "/sys/fs/cgroup/mcp.slice" || r.SampleInterval != 500*time.Millisecond || r.LeakMinCalls == nil || *r.LeakMinCalls != 2000 {
		t.Errorf("load.resources = %+v", c.Load.Resources)
	}
	if c.Deadlock.HangThreshold != 5*time.Second || c.Race.Concurrent != 8 || c.Race.Rounds != 2 || c.Fuzz.Seed != 7 || c.Probe.Timeout != 2*time.Second {
		t.Errorf("blocks: %+v %+v %+v %+v", c.Deadlock, c.Race, c.Fuzz, c.Probe)
	}
	if c.Deadlock.Server != DefaultServerName || c.Race.Server != DefaultServerName || c.Deadlock.Input != nil {
		t.Errorf("block servers %q %q (want the default), deadlock input %v (want nil: made up)", c.Deadlock.Server, c.Race.Server, c.Deadlock.Input)
	}
	h := c.HeadOfLine
	if h == nil || h.SlowTool != "slow" || fmt.Sprint(h.SlowInput["milliseconds"]) != "300" || h.FastTool != "echo" || h.FastInput != nil ||
		h.SlowConcurrent != 2 || h.Rounds != 5 || h.Samples != 10 || h.Threshold != 3 || h.Server != DefaultServerName {
		t.Errorf("head-of-line = %+v", h)
	}
}

func TestExamplesLoad(t *testing.T) {
	cs, err := LoadAll([]string{"../examples"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) < 3 {
		t.Fatalf("examples: %d collections", len(cs))
	}
	l, err := NewLoader(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		data, err := os.ReadFile(c.File)
		if err != nil {
			t.Fatal(err)
		}
		d := &decoder{file: c.File}
		var root = mustNode(t, data)
		l.validateSchema(d, root)
		if len(d.errs) > 0 {
			t.Errorf("%s does not validate against the schema:\n%v", c.File, d.errs)
		}
	}
}

// TestAssertionFieldErrorReportedOnce checks that an assertion field the decoder rejects is
// reported once, at the field, and not again by the assertion's compiler.
func TestAssertionFieldErrorReportedOnce(t *testing.T) {
	tests := []struct {
		name, assertion, want string
	}{
		{"zero latency", "{latency: 0}", "latency max must be positive, got 0"},
		{"negative latency", "{latency: -5}", "latency max must be positive, got -5"},
		{"bad duration", `{latency: "abc"}`, `latency max: "abc" is not a duration`},
		{"zero maxMs", "{type: latency, maxMs: 0}", "latency maxMs must be between 1 and"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := "server: testserver\ntests: [{id: a, call: b, expect: [" + tc.assertion + "]}]"
			_, err := Parse("x.yaml", []byte(doc), nil)
			var el ErrorList
			if !errors.As(err, &el) {
				t.Fatalf("err = %v, want an ErrorList", err)
			}
			if len(el) != 1 {
				t.Fatalf("got %d errors, want 1:\n%v", len(el), err)
			}
			if !strings.Contains(el[0].Error(), tc.want) {
				t.Errorf("error %q lacks %q", el[0].Error(), tc.want)
			}
		})
	}
}

// TestEnvFileStandsInForEnvironment checks that --env-file entries resolve {{secret.X}} and
// {{env.X}} the process environment lacks (as a dotenv file does), that the process wins when
// both set a name, and that such secrets are masked.
func TestEnvFileStandsInForEnvironment(t *testing.T) {
	doc := "server: testserver\ntests: [{id: a, call: echo, with: {s: \"{{secret.API_TOKEN}}\", e: \"{{env.REGION}}\", both: \"{{env.HOME}}\"}}]"
	opts := &LoadOptions{
		LookupEnv: env(map[string]string{"HOME": "/home/u"}),
		EnvFile:   map[string]string{"API_TOKEN": "t-from-file", "REGION": "eu", "HOME": "/file/home"},
	}
	c, err := Parse("e.yaml", []byte(doc), opts)
	if err != nil {
		t.Fatal(err)
	}
	v := c.Vars()
	in, err := v.ExpandMap(c.Test("a").Step.(*ToolCall).Input)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"s": "t-from-file", "e": "eu", "both": "/home/u"}
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("expanded (-want +got):\n%s", diff)
	}
	if got := v.Masker().Mask("key t-from-file here"); got != "key *** here" {
		t.Errorf("masked = %q", got)
	}
	// Without the file the same collection names the missing variable.
	_, err = Parse("e.yaml", []byte(doc), &LoadOptions{LookupEnv: env(nil)})
	wantErrors(t, err, "environment variable API_TOKEN is not set")
}

// TestMaxMessageSize checks the forms of a server's maxMessageSize.
func TestMaxMessageSize(t *testing.T) {
	for doc, want := range map[string]int{
		"64MiB":   64 << 20,
		"512 KiB": 512 << 10,
		"20MB":    20_000_000,
		"4096":    4096,
		`"8192"`:  8192,
		"1GiB":    1 << 30,
	} {
		c, err := Parse("x.yaml", []byte("server: {command: x, maxMessageSize: "+doc+"}\ntests: [{id: a, call: b}]"), nil)
		if err != nil {
			t.Errorf("maxMessageSize: %s: %v", doc, err)
			continue
		}
		if got := c.Servers["default"].MaxMessageSize; got != want {
			t.Errorf("maxMessageSize: %s = %d, want %d", doc, got, want)
		}
	}
}

// TestServerSecretsRegistered: what server definitions carry of secrets is masked from load on,
// in every encoded form, and collections loaded with one LoadOptions.Masker share it.
func TestServerSecretsRegistered(t *testing.T) {
	doc := `
servers:
  web:
    url: "http://127.0.0.1:1/mcp?access_token=tok\"en-1&page=22222"
    headers: {Authorization: "Bearer bearer-2", X-Trace: trace-3333}
  cmd:
    command: node server.js --api-key=key-4 --port 44444
    env: {DB_PASSWORD: pw-55555, MODE: plain-6666}
tests: [{id: a, server: web, call: echo}]
`
	shared := NewMasker()
	c, err := Parse("s.yaml", []byte(doc), &LoadOptions{Masker: shared})
	if err != nil {
		t.Fatal(err)
	}
	if c.Masker != shared {
		t.Fatal("the collection did not take LoadOptions.Masker")
	}
	for in, want := range map[string]string{
		`tok"en-1`:                 "***",
		`"tok\"en-1"`:              `"***"`,
		"tok%22en-1":               "***",
		"bearer-2 trace-3333":      "*** trace-3333",
		"key-4 44444":              "*** 44444",
		"pw-55555 plain-6666":      "*** plain-6666",
		"page=22222 Bearer x-9999": "page=22222 Bearer x-9999",
	} {
		if got := c.Masker.Mask(in); got != want {
			t.Errorf("Mask(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestVarValuesAreYAMLScalars: a --var value is typed as the same text in an environment block
// would be; quoting keeps a string.
func TestVarValuesAreYAMLScalars(t *testing.T) {
	doc := "server: testserver\ntests:\n  - {id: a, call: add, with: {a: \"{{a}}\", b: \"{{b}}\", s: \"{{s}}\", f: \"{{f}}\", q: \"{{q}}\", l: \"{{l}}\", n: \"{{n}}\"}}\n"
	c, err := Parse("v.yaml", []byte(doc), &LoadOptions{Vars: map[string]string{
		"a": "5", "b": "0.3", "s": "hello world", "f": "true", "q": "'5'", "l": "[1, 2]", "n": "~",
	}})
	if err != nil {
		t.Fatal(err)
	}
	in, err := c.Vars().ExpandMap(c.Test("a").Step.(*ToolCall).Input)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": int64(5), "b": 0.3, "s": "hello world", "f": true, "q": "5", "l": "[1, 2]", "n": nil}
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("expanded (-want +got):\n%s", diff)
	}
}

// TestServerFromVariables: a string-form server or defaults.server written with variables is
// classified after the variables are expanded, so environments can switch server and transport.
func TestServerFromVariables(t *testing.T) {
	doc := `
servers:
  main: "{{spec}}"
  other: testserver
defaults: {server: "{{srv}}"}
variables: {srv: main, spec: "testserver --hang-first-call"}
environments:
  staging: {variables: {spec: "http://127.0.0.1:3001/mcp"}}
  local: {variables: {spec: "python -m my_server --port 1"}}
  ws: {variables: {spec: "ws://127.0.0.1:9/ws", srv: other}}
tests:
  - {id: a, call: echo, with: {text: hi}}
`
	tests := []struct {
		env       string
		server    string
		transport string
		command   string
		args      []string
		url       string
	}{
		{"", "main", TransportTestServer, "", []string{"--hang-first-call"}, ""},
		{"staging", "main", TransportHTTP, "", nil, "http://127.0.0.1:3001/mcp"},
		{"local", "main", TransportStdio, "python", []string{"-m", "my_server", "--port", "1"}, ""},
		{"ws", "other", TransportTestServer, "", []string{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.env, func(t *testing.T) {
			c, err := Parse("s.yaml", []byte(doc), &LoadOptions{Environment: tc.env})
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Test("a").Server; got != tc.server {
				t.Errorf("test a runs on %q, want %q", got, tc.server)
			}
			s := c.Servers[tc.server]
			if s.Transport != tc.transport || s.Command != tc.command || s.URL != tc.url || !cmp.Equal(s.Args, tc.args, cmpopts.EquateEmpty()) {
				t.Errorf("server = %+v", s)
			}
		})
	}
	_, err := Parse("s.yaml", []byte(strings.Replace(doc, "srv: main,", "srv: nope,", 1)), nil)
	wantErrors(t, err, `s.yaml:5:11: defaults.server "nope" (from "{{srv}}") is not defined`)
}

// TestEveryProblemAtOnce: an assertion error does not hide the problems validation finds
// (unknown dependency, cycle, undefined variable, duplicate name): one load reports them all.
func TestEveryProblemAtOnce(t *testing.T) {
	doc := `server: testserver
tests:
  - {id: a, call: echo, with: {text: "{{nope}}"}, expect: [{bogus: 1}]}
  - {id: b, call: echo, dependsOn: [ghost]}
  - {id: c, call: echo, dependsOn: [d]}
  - {id: d, call: echo, dependsOn: [c]}
  - {name: Same, call: echo}
  - {name: Same, call: echo}
`
	_, err := Parse("all.yaml", []byte(doc), nil)
	wantErrors(t, err,
		`all.yaml:3:38: undefined variable "nope"`,
		`all.yaml:3:61: test "a" expect: unknown assertion type "bogus"`,
		`depends on unknown test "ghost"`,
		`dependency cycle: c → d → c`,
		`duplicate test name "Same" (first at line 7)`)
}
