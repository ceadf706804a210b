package collection

import (
	"encoding/json"
	"sort"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/mcpspec/mcpspec/assert"
	"github.com/mcpspec/mcpspec/schema"
)

// mustNode parses YAML into its root content node.
func mustNode(t testing.TB, data []byte) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Content[0]
}

// schemaErrors validates a document against the JSON Schema only.
func schemaErrors(t *testing.T, l *Loader, doc string) ErrorList {
	t.Helper()
	d := &decoder{file: "x.yaml"}
	l.validateSchema(d, mustNode(t, []byte(doc)))
	return d.errs
}

// TestSchemaAndModelAgree feeds the same documents to the JSON Schema and to the loader:
// each valid one must pass both, each invalid one must be rejected by both.
func TestSchemaAndModelAgree(t *testing.T) {
	l, err := NewLoader(nil)
	if err != nil {
		t.Fatal(err)
	}
	valid := []string{
		"server: testserver\ntests: [{name: a, call: echo, with: {text: hi}, expect: [{exists: $.content}]}]",
		"server: {command: npx, args: [x]}\ntests: [{id: a, type: tool, tool: t, input: {}, assertions: [{type: schema}, {type: latency, maxMs: 5}]}]",
		"server: testserver\ntests: [{id: a, read: u, expect: [{mimeType: text/plain}, {contains: hi}, {matches: h.}, {isError: false}]}]",
		"server: testserver\ntests: [{id: a, call: x, expect: [{schema: {type: object}}, {schema: output}, {latency: 100}, {snapshot: s1}, {expr: 'isError == false'}]}]",
		"server: testserver\ntests: [{id: a, call: x, expect: [{type: {path: $.a, expected: integer}}, {length: {path: $.a, operator: gt, value: 0}}]}]",
		"server: testserver\ntests: [{id: a, call: x, expectError: {code: -32602, message: bad}}]",
		"servers: {a: testserver}\nload: {duration: 1m, mix: [{test: a, weight: 1}]}\ntests: [{id: a, call: x}]",
		"server: testserver\ndeadlock: {concurrent: 4, includeDestructive: true, skipTools: [x]}",
		"servers: {a: testserver}\nrace: {server: a, tool: echo, rounds: 2, ignore: [$..time]}\nhead-of-line: {slowTool: slow, slowInput: {milliseconds: 200}, fastTool: echo, threshold: 3}",
		"server: testserver\ntests: [{id: a, call: x}]\nload: {scenario: pattern, maxInFlight: 50, sessions: 2, patterns: [{name: p, weight: 2, thinkTime: 10ms, steps: [{tool: a, input: {x: 1}, onError: abort}, {tool: b}]}], thresholds: {minRps: 10, tools: {a: {p99: 5ms}}}}",
		"server: testserver\nclient: {roots: [file:///a, {uri: file:///b, name: b}], sampling: sunny, elicitation: decline}\ntests: [{id: a, call: x}]",
		"server: testserver\ntests: [{id: a, call: x}]\nload: {resources: {metricsUrl: 'http://127.0.0.1:9100/metrics', sampleInterval: 250ms, leakMinCalls: 0}}",
		"server: testserver\ntests: [{id: a, call: x}]\nload: {resources: {serverPid: 4242}}",
		"server: testserver\ntests: [{id: a, call: x}]\nload: {noGate: [crash, leak]}",
		"server: testserver\ntests: [{id: a, call: x}]\nload: {noGate: [all]}",
		"server: testserver\ntests: [{id: a, call: x, client: {sampling: [{when: {contains: weather}, reply: sunny}, {reply: {content: {type: text, text: hi}}}], elicitation: {when: [{exists: $.message}], error: {code: -1, message: no}}}}]",
		"server: testserver\ntests: [{id: a, call: x, notifications: [{method: notifications/progress, count: {min: 3}, increasing: $.progress, expect: [{exists: $.total}], wait: 1s}, {order: [notifications/message, notifications/progress]}], requests: [{method: sampling/createMessage, count: 1, where: {contains: weather}}]}]",
	}
	invalid := []string{
		"server: testserver\ntests: [{name: a, call: echo, asserts: []}]",                                              // unknown key
		"server: testserver\ntests: [{name: a, call: echo, retries: 11}]",                                              // out of range
		"server: testserver\ntests: [{name: a, call: echo, timeout: soon}]",                                            // bad duration
		"server: testserver\ntests: [{name: a, call: echo, read: x}]",                                                  // two steps
		"server: testserver\ntests: [{name: a}]",                                                                       // no step
		"server: testserver\ntests: [{call: echo}]",                                                                    // no name or id
		"server: testserver\ntests: [{name: a, call: echo, expect: [{type: equals, path: $.a}]}]",                      // missing value
		"server: testserver\ntests: [{name: a, call: echo, expect: [{type: exists, path: $.a, value: 1}]}]",            // field not for type
		"server: testserver\ntests: [{name: a, call: echo, expect: [{type: nope}]}]",                                   // unknown type
		"server: testserver\ntests: [{name: a, call: echo, expect: [{type: {path: $.a, expected: float}}]}]",           // bad json type
		"server: testserver\ntests: [{name: a, call: echo, expect: [{latency: {maxMs: 1, max: 1s}}]}]",                 // both bounds
		"server: testserver\ntests: [{name: a, list: tool}]",                                                           // bad list kind
		"server: {transport: grpc, url: x}\ntests: [{name: a, call: b}]",                                               // bad transport
		"tests: [{name: a, call: b}]",                                                                                  // no server
		"schemaVersion: \"2\"\nserver: testserver\ntests: [{name: a, call: b}]",                                        // bad version
		"server: testserver\ntests: []",                                                                                // empty tests
		"server: testserver\ntests: [{name: a, call: b, extract: [{name: x}]}]",                                        // extract without path
		"server: testserver\ntests: [{name: a, call: b}]\nload: {rate: -1}",                                            // reserved block range
		"server: testserver\ntests: [{name: a, call: b}]\nrace: {concurrent: 2}",                                       // race without tool
		"server: testserver\nhead-of-line: {slowTool: a, fastTool: b, threshold: 1}",                                   // threshold too low
		"server: testserver\ntests: [{name: a, complete: {ref: {type: tool}, argument: {name: x}}}]",                   // bad ref type
		"server: testserver\ntests: [{name: a, call: b}]\nload: {patterns: [{steps: [{tool: a, onError: skip}]}]}",     // bad onError
		"server: testserver\ntests: [{name: a, call: b}]\nload: {patterns: [{name: p}]}",                               // pattern without steps
		"server: testserver\ntests: [{name: a, call: b}]\nload: {thresholds: {tools: {a: {p98: 1ms}}}}",                // unknown tool threshold
		"server: testserver\nclient: {sampling: {when: {contains: x}}}\ntests: [{name: a, call: b}]",                   // rule without reply
		"server: testserver\nclient: {sampling: {reply: x, error: y}}\ntests: [{name: a, call: b}]",                    // reply and error
		"server: testserver\nclient: {roots: [{name: x}]}\ntests: [{name: a, call: b}]",                                // root without uri
		"server: testserver\nclient: {smapling: x}\ntests: [{name: a, call: b}]",                                       // unknown client key
		"server: testserver\ntests: [{name: a, call: b, notifications: [{count: 1}]}]",                                 // no method
		"server: testserver\ntests: [{name: a, call: b, notifications: [{method: m, order: [a, b]}]}]",                 // method and order
		"server: testserver\ntests: [{name: a, call: b, notifications: [{order: [a]}]}]",                               // order of one
		"server: testserver\ntests: [{name: a, call: b, requests: [{method: m, count: -1}]}]",                          // negative count
		"server: testserver\ntests: [{name: a, call: b, requests: [{method: m, count: {}}]}]",                          // empty count
		"server: testserver\ntests: [{name: a, call: b}]\nload: {resources: {serverPid: 1, cgroup: /sys/fs/cgroup/x}}", // two sources
		"server: testserver\ntests: [{name: a, call: b}]\nload: {resources: {cgroup: /x, metricsUrl: http://h/m}}",     // two sources
		"server: testserver\ntests: [{name: a, call: b}]\nload: {resources: {pid: 1}}",                                 // unknown key
		"server: testserver\ntests: [{name: a, call: b}]\nload: {resources: {leakMinCalls: -1}}",                       // negative
		"server: testserver\ntests: [{name: a, call: b}]\nload: {resources: {serverPid: 0}}",                           // not a pid
		"server: testserver\ntests: [{name: a, call: b}]\nload: {noGate: [crash, leek]}",                               // unknown gate
		"server: testserver\ntests: [{name: a, call: b}]\nload: {noGate: crash}",                                       // not a list
	}
	for _, doc := range valid {
		if errs := schemaErrors(t, l, doc); len(errs) > 0 {
			t.Errorf("schema rejects a valid document:\n%s\n%v", doc, errs)
		}
		if _, err := l.Parse("x.yaml", []byte(doc)); err != nil {
			t.Errorf("loader rejects a valid document:\n%s\n%v", doc, err)
		}
	}
	for _, doc := range invalid {
		if errs := schemaErrors(t, l, doc); len(errs) == 0 {
			t.Errorf("schema accepts an invalid document:\n%s", doc)
		}
		if _, err := l.Parse("x.yaml", []byte(doc)); err == nil {
			t.Errorf("loader accepts an invalid document:\n%s", doc)
		}
	}
}

// TestSchemaPositions checks that schema violations are reported at the offending node.
func TestSchemaPositions(t *testing.T) {
	l, err := NewLoader(nil)
	if err != nil {
		t.Fatal(err)
	}
	errs := schemaErrors(t, l, "server: testserver\ntests:\n  - name: a\n    call: echo\n    retries: 11\n")
	if len(errs) == 0 || errs[0].Pos.Line != 5 || errs[0].Pos.Column != 14 {
		t.Errorf("errors = %v, want one at 5:14", errs)
	}
	errs = schemaErrors(t, l, "server: testserver\ntests:\n  - name: a\n    call: echo\n    bogus: 1\n")
	if len(errs) == 0 || errs[0].Pos.Line != 5 || errs[0].Pos.Column != 5 {
		t.Errorf("errors = %v, want one at the key 5:5", errs)
	}
}

// TestSchemaAssertionsMatchRegistry keeps the schema's assertion types and fields in step with
// assert.Builtins().
func TestSchemaAssertionsMatchRegistry(t *testing.T) {
	var doc struct {
		Defs struct {
			Assertion struct {
				AnyOf []struct {
					Properties map[string]json.RawMessage `json:"properties"`
					Required   []string                   `json:"required"`
				} `json:"anyOf"`
			} `json:"assertion"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal([]byte(schema.CollectionV1()), &doc); err != nil {
		t.Fatal(err)
	}
	long := map[string][]string{}
	short := map[string]bool{}
	for _, form := range doc.Defs.Assertion.AnyOf {
		typ, ok := form.Properties["type"]
		if !ok {
			for k := range form.Properties {
				short[k] = true
			}
			continue
		}
		var e struct {
			Enum []string `json:"enum"`
		}
		if err := json.Unmarshal(typ, &e); err != nil || len(e.Enum) == 0 {
			short["type"] = true // the shorthand of the "type" assertion
			continue
		}
		var fields []string
		for k := range form.Properties {
			if k != "type" {
				fields = append(fields, k)
			}
		}
		sort.Strings(fields)
		for _, n := range e.Enum {
			long[n] = fields
		}
	}
	reg := assert.Builtins()
	for _, name := range reg.Names() {
		b, _ := reg.Lookup(name)
		want := append([]string(nil), b.Fields...)
		sort.Strings(want)
		got, ok := long[name]
		if !ok {
			t.Errorf("schema lacks the long form of %q", name)
		} else if !equalStrings(got, want) {
			t.Errorf("schema fields of %q = %v, registry %v", name, got, want)
		}
		if !short[name] {
			t.Errorf("schema lacks the shorthand of %q", name)
		}
		delete(long, name)
	}
	for name := range long {
		t.Errorf("schema has assertion type %q the registry does not know", name)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
