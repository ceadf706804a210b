package collection

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFuzzBlock(t *testing.T) {
	doc := `
servers: {a: testserver, b: "python -m srv"}
defaults: {server: a}
tests: [{id: x, call: echo}]
fuzz:
  server: b
  iterations: 20
  seed: -3
  time: 30s
  payloads: [deep-nesting, schema]
  strict: true
  includeDestructive: true
  includeOpenWorld: true
  tools: [read_*]
  skipTools: [delete]
  hangAfter: 2s
  saveFindings: out/findings.yaml
`
	c, err := Parse("f.yaml", []byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := &FuzzSpec{Server: "b", Iterations: 20, Seed: -3, Time: 30 * time.Second, Payloads: []string{"deep-nesting", "schema"},
		Strict: true, IncludeDestructive: true, IncludeOpenWorld: true, Tools: []string{"read_*"}, SkipTools: []string{"delete"},
		HangAfter: 2 * time.Second, SaveFindings: "out/findings.yaml", Pos: c.Fuzz.Pos}
	if d := cmp.Diff(want, c.Fuzz); d != "" {
		t.Errorf("fuzz block (-want +got):\n%s", d)
	}
	c, err = Parse("f.yaml", []byte("server: testserver\nfuzz: {}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Fuzz.Iterations != DefaultFuzzIterations || c.Fuzz.Server != DefaultServerName || c.Fuzz.Payloads != nil {
		t.Errorf("defaults: %+v", c.Fuzz)
	}
}

func TestFuzzBlockErrors(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"server: testserver\nfuzz: {payloads: [giant]}", `f.yaml:2:19: fuzz.payloads: unknown family "giant"`},
		{"server: testserver\nfuzz: {server: other}", `fuzz.server "other" is not a server of the collection`},
		{"servers: {a: testserver, b: testserver}\nfuzz: {}", "fuzz: the collection has several servers and no default"},
		{"server: testserver\nfuzz: {iterations: 0}", "fuzz.iterations"},
		{"server: testserver\nfuzz: {hangAfter: soon}", "fuzz.hangAfter"},
		{"server: testserver\nfuzz: {payload: [schema]}", `unknown key "payload" in fuzz`},
	} {
		_, err := Parse("f.yaml", []byte(tc.doc), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.doc, err, tc.want)
		}
	}
}

func TestFrameStep(t *testing.T) {
	doc := `
server: testserver
tests:
  - {name: text, frame: '{"jsonrpc":"2.0","id":9,"method":"ping"}'}
  - {name: long form, frame: {text: '{"x":{{not a template}}'}}
  - {name: bytes, type: frame, frame: {base64: "/3sK"}}
`
	c, err := Parse("f.yaml", []byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]byte{[]byte(`{"jsonrpc":"2.0","id":9,"method":"ping"}`), []byte(`{"x":{{not a template}}`), {0xff, '{', '\n'}}
	for i, tt := range c.Tests {
		f, ok := tt.Step.(*Frame)
		if !ok || !bytes.Equal(f.Data, want[i]) {
			t.Errorf("test %d: step %#v, want frame %q", i, tt.Step, want[i])
		}
		if tt.Kind() != "request" {
			t.Errorf("test %d kind %q", i, tt.Kind())
		}
	}
	for _, tc := range []struct{ doc, want string }{
		{"server: testserver\ntests: [{name: a, frame: {text: x, base64: eA==}}]", "frame takes text or base64, not both"},
		{"server: testserver\ntests: [{name: a, frame: {}}]", "frame needs text or base64"},
		{"server: testserver\ntests: [{name: a, frame: {base64: '!!'}}]", "frame base64 does not decode"},
		{"server: testserver\ntests: [{name: a, frame: x, request: {method: ping}}]", "more than one step"},
		{"server: testserver\ntests: [{name: a, type: request, frame: x}]", `type "request" does not match step key "frame"`},
		{"server: testserver\ntests: [{name: a, type: frame, request: {method: ping}}]", `type "frame" does not match step key "request"`},
	} {
		_, err := Parse("f.yaml", []byte(tc.doc), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.doc, err, tc.want)
		}
	}
}

// TestFuzzAndFrameSchemaAgree checks the JSON Schema and the loader on the fuzz block and the
// frame step.
func TestFuzzAndFrameSchemaAgree(t *testing.T) {
	l, err := NewLoader(nil)
	if err != nil {
		t.Fatal(err)
	}
	valid := []string{
		"server: testserver\nfuzz: {iterations: 5, seed: 1, time: 1m, payloads: [schema, batch], strict: true, tools: [a], skipTools: [b], hangAfter: 1s, saveFindings: f.yaml}",
		"server: testserver\ntests: [{name: a, frame: '{}'}, {name: b, frame: {base64: eA==}}, {name: c, type: frame, frame: {text: x}}]",
	}
	invalid := []string{
		"server: testserver\nfuzz: {payloads: [giant]}",
		"server: testserver\nfuzz: {iterations: 0}",
		"server: testserver\ntests: [{name: a, frame: {text: x, base64: eA==}}]",
		"server: testserver\ntests: [{name: a, frame: {}}]",
		"server: testserver\ntests: [{name: a, frame: {txt: x}}]",
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
