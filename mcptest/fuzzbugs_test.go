package mcptest_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/mcptest"
)

func nested(depth int) map[string]any {
	var v any = 0
	for range depth {
		v = []any{v}
	}
	return map[string]any{"x": v}
}

func TestCrashOnDepth(t *testing.T) {
	s, c := startTCP(t, &mcptest.Options{CrashOnDepth: 20})
	c.initialize()
	// The envelope and params add two levels: 18 arrays make 20.
	if m := c.call("ping", nested(18)); m.Error != nil {
		t.Fatalf("within the limit: %s", m.raw)
	}
	c.request("ping", nested(19))
	c.expectClosed()
	if st := s.Stats(); st.Crashes != 1 {
		t.Errorf("crashes %d", st.Crashes)
	}
	// Brackets inside strings do not count.
	c = dialTCP(t, s)
	c.initialize()
	if m := c.call("ping", map[string]any{"s": strings.Repeat("[", 100)}); m.Error != nil {
		t.Errorf("brackets in a string: %s", m.raw)
	}
}

func TestPanicOnWrongType(t *testing.T) {
	s, c := startTCP(t, &mcptest.Options{PanicOnWrongType: true})
	c.initialize()
	var r toolResult
	c.result("tools/call", toolCall("add", map[string]any{"a": 1, "b": 2}), &r)
	if r.text() != "3" {
		t.Errorf("add: %q", r.text())
	}
	c.result("tools/call", toolCall("add", map[string]any{"a": 1}), &r) // missing is not a wrong type
	if !r.IsError {
		t.Error("missing b: want isError")
	}
	c.request("tools/call", toolCall("add", map[string]any{"a": "1", "b": 2}))
	c.expectClosed()
	c = dialTCP(t, s)
	c.initialize()
	c.request("tools/call", toolCall("echo", map[string]any{"text": nil}))
	c.expectClosed()
	if st := s.Stats(); st.Crashes != 2 {
		t.Errorf("crashes %d", st.Crashes)
	}
}

func TestMalformedMethod(t *testing.T) {
	s, c := startTCP(t, &mcptest.Options{MalformedMethod: "prompts/list"})
	c.initialize()
	c.request("prompts/list", nil)
	if line := c.recvRaw(); json.Valid(line) || !bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","id":2,`)) {
		t.Errorf("prompts/list answered %s, want truncated JSON keeping the id", line)
	}
	if m := c.call("tools/list", nil); m.Error != nil {
		t.Errorf("other methods: %s", m.raw)
	}
	if st := s.Stats(); st.Malformed != 1 {
		t.Errorf("malformed %d", st.Malformed)
	}
}

func TestSilentUnknownMethods(t *testing.T) {
	_, c := startTCP(t, &mcptest.Options{SilentUnknownMethods: true})
	c.initialize()
	c.request("no/such/method", nil)
	c.expectSilence(300 * time.Millisecond)
	if m := c.call("ping", nil); m.Error != nil {
		t.Errorf("ping: %s", m.raw)
	}
	if m := c.call("tools/call", toolCall("nope", nil)); m.Error == nil || m.Error.Code != -32602 {
		t.Errorf("unknown tool: %s, want -32602 as usual", m.raw)
	}
}

func TestAcceptInvalid(t *testing.T) {
	_, c := startTCP(t, &mcptest.Options{AcceptInvalid: true})
	c.initialize()
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"a": "x", "b": 2}, "2"},
		{map[string]any{"b": true}, "0"},
		{nil, "0"},
	} {
		var r toolResult
		c.result("tools/call", toolCall("add", tc.args), &r)
		if r.IsError || r.text() != tc.want {
			t.Errorf("add %v: %q isError %v, want %q", tc.args, r.text(), r.IsError, tc.want)
		}
	}
	var r toolResult
	c.result("tools/call", map[string]any{"name": "echo", "arguments": 5}, &r)
	if r.IsError || r.text() != "" {
		t.Errorf("echo with arguments 5: %q isError %v", r.text(), r.IsError)
	}
	c.result("tools/call", toolCall("error", map[string]any{"as_tool": true}), &r)
	if !r.IsError {
		t.Error("optional arguments keep their defaults: the error tool should still fail")
	}
}

// TestFuzzModesPanicAsACommand: as `mcpspec testserver`, a provoked crash is a real panic:
// exit status 2 and a Go stack trace on stderr.
func TestFuzzModesPanicAsACommand(t *testing.T) {
	cmd := helperCommand(t, "--transport stdio --panic-on-wrong-type")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := newLineClient(t, stdout, stdin, stdin)
	c.initialize()
	c.request("tools/call", toolCall("echo", map[string]any{"text": 5}))
	c.expectClosed()
	if code := exitCodeOf(t, cmd); code != 2 {
		t.Errorf("exit code %d, want 2", code)
	}
	if !strings.Contains(stderr.String(), "panic: mcptest: tools/call: argument text has the wrong type") || !strings.Contains(stderr.String(), "goroutine ") {
		t.Errorf("stderr: %s", stderr.String())
	}
}
