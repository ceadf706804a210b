package collection

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestClientBlock(t *testing.T) {
	doc := `server: testserver
client:
  roots: [file:///work, {uri: file:///data, name: data}]
  sampling: It is sunny.
  elicitation: decline
tests:
  - name: a
    call: ask
    client:
      sampling:
        - when: {contains: weather}
          reply: {content: {type: text, text: rain}}
        - error: no model here
      elicitation:
        when: [{equals: {path: $.message, value: "{{q}}"}}]
        reply: {action: accept, content: {answer: "{{q}}"}}
variables: {q: why}
`
	c, err := Parse("x.yaml", []byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	cc := c.Client
	if diff := cmp.Diff([]Root{{URI: "file:///work"}, {URI: "file:///data", Name: "data"}}, cc.Roots); diff != "" {
		t.Errorf("roots (-want +got):\n%s", diff)
	}
	want := map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "It is sunny."}, "model": "mcpspec", "stopReason": "endTurn"}
	if len(cc.Sampling) != 1 || !cmp.Equal(cc.Sampling[0].Reply, want) || cc.Sampling[0].When != nil {
		t.Errorf("sampling shorthand = %+v", cc.Sampling)
	}
	if len(cc.Elicitation) != 1 || !cmp.Equal(cc.Elicitation[0].Reply, map[string]any{"action": "decline"}) {
		t.Errorf("elicitation shorthand = %+v", cc.Elicitation)
	}
	if r, s, e := cc.Declares(); !r || !s || !e {
		t.Errorf("Declares = %v %v %v", r, s, e)
	}
	tc := c.Tests[0].Client
	if len(tc.Sampling) != 2 || len(tc.Sampling[0].When) != 1 || tc.Sampling[0].When[0].Spec.Type != "contains" {
		t.Fatalf("test sampling rules = %+v", tc.Sampling)
	}
	if got := tc.Sampling[0].Reply.(map[string]any); got["role"] != "assistant" || got["model"] != "mcpspec" {
		t.Errorf("a reply without role and model gets them: %v", got)
	}
	if e := tc.Sampling[1].Error; e == nil || e.Code != -1 || e.Message != "no model here" {
		t.Errorf("error rule = %+v", e)
	}
	if tc.Roots != nil {
		t.Error("a test without roots has roots")
	}
}

func TestMessageExpects(t *testing.T) {
	doc := `server: testserver
tests:
  - name: a
    call: slow
    notifications:
      - method: notifications/progress
        count: {min: 3}
        increasing: $.progress
        expect: {exists: $.total}
        wait: 2s
      - {method: "notifications/*", count: 0}
      - order: [notifications/message, notifications/progress]
    requests:
      - method: sampling/createMessage
        where: {contains: weather}
        count: {max: 2}
`
	c, err := Parse("x.yaml", []byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	tt := c.Tests[0]
	if !tt.WantsMessages() || len(tt.Notifications) != 3 || len(tt.Requests) != 1 {
		t.Fatalf("notifications %d, requests %d", len(tt.Notifications), len(tt.Requests))
	}
	p := tt.Notifications[0]
	if p.Method != "notifications/progress" || p.Count != (CountRange{Min: 3, Max: -1}) || p.Increasing == nil || len(p.Expect) != 1 || p.Wait != 2*time.Second {
		t.Errorf("progress entry = %+v", p)
	}
	if n := tt.Notifications[1]; n.Count != (CountRange{0, 0}) || !MatchMethod(n.Method, "notifications/message") || MatchMethod(n.Method, "sampling/createMessage") {
		t.Errorf("count 0 entry = %+v", n)
	}
	if o := tt.Notifications[2]; !cmp.Equal(o.Order, []string{"notifications/message", "notifications/progress"}) {
		t.Errorf("order entry = %+v", o)
	}
	if r := tt.Requests[0]; r.Count != (CountRange{0, 2}) || len(r.Where) != 1 {
		t.Errorf("requests entry = %+v", r)
	}
	for _, tc := range []struct {
		r    CountRange
		n    int
		ok   bool
		text string
	}{
		{CountRange{1, -1}, 0, false, "at least 1"}, {CountRange{1, -1}, 5, true, "at least 1"},
		{CountRange{2, 2}, 2, true, "2"}, {CountRange{0, 2}, 3, false, "at most 2"}, {CountRange{2, 4}, 3, true, "between 2 and 4"},
	} {
		if tc.r.Holds(tc.n) != tc.ok || tc.r.String() != tc.text {
			t.Errorf("%+v.Holds(%d) = %v, String %q", tc.r, tc.n, tc.r.Holds(tc.n), tc.r.String())
		}
	}
}

func TestClientAndMessageErrors(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"bad action", "client: {elicitation: maybe}", `unknown action "maybe"`},
		{"sampling without content", "client: {sampling: {reply: {model: m}}}", "has no content"},
		{"latency over params", "client: {sampling: {when: {latency: 5ms}, reply: x}}", "a latency assertion does not apply to a message's params"},
		{"schema output over params", "client: {sampling: {when: {schema: output}, reply: x}}", "a message has no output schema"},
		{"error code 0", "client: {sampling: {error: {code: 0}}}", "code must not be 0"},
		{"undefined variable in a rule", "client: {sampling: {when: {contains: '{{nope}}'}, reply: x}}", `"nope"`},
		{"wait without minimum", "tests: [{name: b, call: c, notifications: [{method: m, count: 0, wait: 1s}]}]", "waits for nothing"},
		{"bad pattern", "tests: [{name: b, call: c, requests: [{method: 'a[', count: 1}]}]", "bad pattern"},
		{"max below min", "tests: [{name: b, call: c, requests: [{method: m, count: {min: 3, max: 1}}]}]", "max 1 is below min 3"},
		{"bad increasing path", "tests: [{name: b, call: c, notifications: [{method: m, increasing: nope}]}]", "increasing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := "server: testserver\n" + tc.doc + "\n"
			if !strings.Contains(tc.doc, "tests:") {
				doc += "tests: [{name: a, call: echo}]\n"
			}
			_, err := Parse("x.yaml", []byte(doc), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
