package fuzz

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpspec/mcpspec/session/transport"
)

func TestMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		frame   string
		problem string // "" for well-formed
		resp    bool
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, "", true},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`, "", true},
		{`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`, "", false},
		{`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"x"}}]`, "", true},
		{`{"jsonrpc":"2.0","id":1,"result":{}`, "not JSON", false},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"\xff\"}", "UTF-8", false},
		{`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, "both result and error", true},
		{`{"jsonrpc":"2.0","id":1}`, "neither result nor error", true},
		{`{"jsonrpc":"1.0","id":1,"result":{}}`, `"jsonrpc" is "1.0"`, true},
		{`{"id":1,"result":{}}`, `"jsonrpc" is absent`, true},
		{`{"jsonrpc":"2.0","result":{}}`, "without an id", true},
		{`{"jsonrpc":"2.0","id":null,"result":{}}`, "null id", true},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}`, "code", true},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}`, "not an integer", true},
		{`{"jsonrpc":"2.0","id":1,"error":"oops"}`, "not an object", true},
		{`{"jsonrpc":"2.0","method":5}`, "method is not a string", false},
		{`[]`, "empty batch", false},
		{`42`, "not an object", false},
	}
	for _, tt := range tests {
		ms := messages([]byte(tt.frame))
		problem := ""
		for _, m := range ms {
			if m.problem != "" {
				problem = m.problem
				break
			}
		}
		if (tt.problem == "") != (problem == "") || (tt.problem != "" && !strings.Contains(problem, tt.problem)) {
			t.Errorf("messages(%s): problem %q, want ~%q", tt.frame, problem, tt.problem)
		}
		if tt.problem == "" && ms[0].response != tt.resp {
			t.Errorf("messages(%s): response %v", tt.frame, ms[0].response)
		}
	}
	if !answers([]byte(`{"jsonrpc":"2.0","id":1e2,"result":{}}`), []byte(`100`)) {
		t.Error("an id written 1e2 does not answer id 100")
	}
	if f := (tapped{data: []byte(`{"jsonrpc":"2.0","id":1,"res`), size: 1 << 21}); frameProblem(f) != "" {
		t.Error("a frame too long to judge was judged")
	}
	if f := (tapped{fault: &transport.FrameError{Reason: "invalid-utf8"}}); !strings.Contains(frameProblem(f), "framing fault") {
		t.Error("a transport framing fault is not a problem")
	}
}

func TestExitFault(t *testing.T) {
	t.Parallel()
	exit := func(code int, sig string) error {
		return errors.Join(errors.New("read"), &transport.ExitError{Code: code, Signal: sig})
	}
	tests := []struct {
		err     error
		stderr  string
		crashed bool
	}{
		{exit(0, ""), "", false},
		{exit(1, ""), "closing: bad input\n", false},
		{exit(1, ""), "panic: runtime error: index out of range\n\ngoroutine 1 [running]:\n", true},
		{exit(1, ""), "Traceback (most recent call last):\n  File \"x.py\"\nValueError\n", true},
		{exit(1, ""), "/srv/index.js:3\n  throw e;\n  ^\n\nTypeError: x is undefined\n    at Object.<anonymous> (/srv/index.js:3:9)\n", true},
		{exit(1, ""), "thread 'main' panicked at src/main.rs:2:5:\n", true},
		{exit(2, ""), "", true},
		{exit(-1, "segmentation fault"), "", true},
		{errors.New("EOF"), "panic: x", false},
	}
	for _, tt := range tests {
		_, crashed := exitFault(tt.err, tt.stderr)
		if crashed != tt.crashed {
			t.Errorf("exitFault(%v, %q) crashed = %v, want %v", tt.err, tt.stderr, crashed, tt.crashed)
		}
	}
	// A handled error logged with its stack does not end the process: not a crash report.
	if _, crashed := exitFault(exit(1, ""), "Error: invalid params\n  details: x\n"); crashed {
		t.Error("an error message without a stack frame counted as a crash report")
	}
}

func TestOutcomeBug(t *testing.T) {
	t.Parallel()
	for _, o := range Outcomes() {
		want := o == Crash || o == Hang || o == Malformed
		if o.Bug(false) != want {
			t.Errorf("%s.Bug(false) = %v", o, o.Bug(false))
		}
		if o.Bug(true) != (want || o == AcceptedInvalid) {
			t.Errorf("%s.Bug(true) = %v", o, o.Bug(true))
		}
	}
}
