package detect

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/session"
)

func TestFromToolClassifies(t *testing.T) {
	sent := time.Now()
	late := &session.Response{Result: json.RawMessage(`{"content":[]}`), Timing: session.Timing{Received: sent.Add(7 * time.Second)}}
	cases := []struct {
		name string
		res  *session.ToolResult
		err  error
		want Class
		ans  bool
	}{
		{"result", &session.ToolResult{Raw: json.RawMessage(`{}`), Timing: session.Timing{Latency: time.Millisecond}}, nil, OK, true},
		{"tool error", &session.ToolResult{IsError: true}, nil, OK, true},
		{"JSON-RPC error", nil, &session.Error{Category: session.ServerError, Code: -32000, Message: "no"}, OK, true},
		{"invalid params", nil, &session.Error{Category: session.ProtocolError, Code: -32602}, OK, true},
		{"hang", nil, &session.Error{Category: session.Hang, Elapsed: 7 * time.Second, Response: late}, Slow, true},
		{"deadlock", nil, &session.Error{Category: session.Deadlock, Elapsed: 15 * time.Second}, Deadlock, false},
		{"crash", nil, &session.Error{Category: session.Crash}, Crash, false},
		{"disconnected", nil, &session.Error{Category: session.Disconnected}, Crash, false},
		{"malformed", nil, &session.Error{Category: session.Malformed}, Failed, false},
		{"not a session error", nil, errors.New("encode"), Failed, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := FromTool(3, "echo", sent, c.res, c.err)
			if o.Class != c.want || o.Answered() != c.ans || o.Index != 3 || o.Tool != "echo" {
				t.Errorf("got class %s answered %v (%+v), want %s %v", o.Class, o.Answered(), o, c.want, c.ans)
			}
		})
	}
	if o := FromTool(0, "x", sent, nil, &session.Error{Category: session.Hang, Elapsed: time.Second, Response: late}); !o.AnsweredAt.Equal(late.Timing.Received) || string(o.Result) != `{"content":[]}` {
		t.Errorf("hang keeps the late answer: %+v", o)
	}
}

func TestRequeue(t *testing.T) {
	t0 := time.Unix(1000, 0)
	const threshold = 5 * time.Second
	stuck := func(i int) Outcome {
		return Outcome{Index: i, Class: Deadlock, Sent: t0, Latency: 15 * time.Second}
	}
	answered := func(i int, at time.Duration) Outcome {
		return Outcome{Index: i, Class: OK, Sent: t0, AnsweredAt: t0.Add(at), Latency: at}
	}
	cases := []struct {
		name  string
		group []Outcome
		want  []Class
	}{
		{"nothing answered: deadlock", []Outcome{stuck(0), stuck(1)}, []Class{Deadlock, Deadlock}},
		{"others answered before the threshold: still stuck", []Outcome{answered(0, time.Millisecond), stuck(1)}, []Class{OK, Deadlock}},
		{"an answer in the grace period: queued", []Outcome{answered(0, 9*time.Second), stuck(1)}, []Class{OK, Slow}},
		{"an answer after the call was given up does not count", []Outcome{answered(0, 16*time.Second), stuck(1)}, []Class{OK, Deadlock}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			Requeue(c.group, threshold)
			var got []Class
			for _, o := range c.group {
				got = append(got, o.Class)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("classes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSelect(t *testing.T) {
	tool := func(name, ann string) session.Tool {
		return session.Tool{Name: name, Annotations: json.RawMessage(ann)}
	}
	tools := []session.Tool{
		tool("plain", ``),
		tool("read", `{"readOnlyHint":true}`),
		tool("delete", `{"destructiveHint":true}`),
		tool("readonly-destructive", `{"readOnlyHint":true,"destructiveHint":true}`),
		tool("not-destructive", `{"destructiveHint":false,"readOnlyHint":false}`),
		tool("fetch", `{"openWorldHint":true}`),
		tool("odd", `"not an object"`),
		tool("gzip", ``),
	}
	names := func(ts []session.Tool) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.Name)
		}
		return out
	}
	chosen, skipped := Selection{Skip: []string{"gzip"}}.Select(tools)
	if diff := cmp.Diff([]string{"plain", "read", "readonly-destructive", "not-destructive", "odd"}, names(chosen)); diff != "" {
		t.Errorf("chosen (-want +got):\n%s", diff)
	}
	if len(skipped) != 3 {
		t.Errorf("skipped %+v, want delete, fetch and gzip", skipped)
	}
	all, none := Selection{IncludeDestructive: true, IncludeOpenWorld: true}.Select(tools)
	if len(all) != len(tools) || len(none) != 0 {
		t.Errorf("with everything included: chose %v, skipped %+v", names(all), none)
	}
}
