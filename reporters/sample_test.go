package reporters

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpspec/mcpspec/result"
)

// t0 is the fixed start of the sample run, so goldens never depend on the clock.
var t0 = time.Date(2026, 5, 10, 7, 30, 0, 0, time.UTC)

// sampleRun covers every status, retries (a flaky pass and an errored retry), text the runner
// already masked, unicode, characters every format must escape (<>&"'#\|`), control
// characters XML cannot carry, and every field of the result model at least once.
func sampleRun() *result.Run {
	ms := time.Millisecond
	smoke := &result.Collection{
		Name: "smoke",
		File: "collections/smoke.yaml",
		Servers: []result.Server{{
			Name: "everything", Transport: "stdio", Target: "mcptest serve --token ***",
			ProtocolVersion: "2025-06-18", ServerName: "mcptest", ServerVersion: "1.2.3",
			StderrPath: "runs/01HXFIXED/everything.stderr",
		}},
		StartedAt: t0,
		Duration:  1200 * ms,
		Tools: map[string][]result.Tool{
			"everything": {
				{Name: "echo", Description: "Echoes its input", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)},
				{Name: "add", Description: "Adds a & b", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}`),
					OutputSchema: json.RawMessage(`{"type":"object","properties":{"sum":{"type":"number"}}}`)},
			},
		},
		Tests: []*result.Test{
			{
				ID: "smoke/echo", Name: "echo returns text", Tags: []string{"smoke", "fast"}, Server: "everything",
				Kind: "tool", Target: "echo", Status: result.Passed, Duration: 14 * ms, Latency: 12 * ms,
				Attempts:  []result.Attempt{{Status: result.Passed, Duration: 14 * ms, Latency: 12 * ms}},
				Request:   `{"name":"echo","arguments":{"text":"héllo 🌍"}}`,
				Response:  `{"content":[{"type":"text","text":"héllo 🌍"}]}`,
				Extracted: map[string]string{"greeting": "héllo 🌍", "apiKey": "***"},
			},
			{
				ID: "smoke/add", Name: `add <a> & "b"`, Server: "everything",
				Kind: "tool", Target: "add", Status: result.Failed, Duration: 5 * ms, Latency: 4 * ms,
				Attempts: []result.Attempt{{Status: result.Failed, Duration: 5 * ms, Latency: 4 * ms,
					Failures: []result.Failure{{Assertion: "equals", Path: "$.content[0].text", Expected: "3", Actual: "4", Message: "expected 3, got 4", Line: 14}}}},
				Failures: []result.Failure{
					{Assertion: "equals", Path: "$.content[0].text", Expected: "3", Actual: "4", Message: "expected 3, got 4", Line: 14},
					{Assertion: "expr", Expected: `result.isError == false && len(content) > 0`, Actual: "true && 1 > 0 → <b>ok</b>", Message: "expression held, but \"isError\" was 'true' | see `log` #2", Line: 17},
				},
				Request:  `{"name":"add","arguments":{"a":1,"b":2},"_meta":{"authorization":"Bearer ***"}}`,
				Response: "{\"content\":[{\"type\":\"text\",\"text\":\"4\"}],\"note\":\"<script>alert(\\\"x\\\")</script> & ]]> \\\\ ```\"}",
			},
			{
				ID: "smoke/search", Name: "flaky search", Server: "everything",
				Kind: "tool", Target: "search", Status: result.Passed, Duration: 640 * ms, Latency: 95 * ms,
				Attempts: []result.Attempt{
					{Status: result.Failed, Duration: 120 * ms, Latency: 110 * ms, Failures: []result.Failure{{Assertion: "length", Path: "$.results", Expected: "> 0", Actual: "0", Message: "empty results"}}},
					{Status: result.Errored, Duration: 420 * ms, Latency: 400 * ms, Error: &result.Error{Category: "Timeout", Message: "no response within 400ms"}},
					{Status: result.Passed, Duration: 100 * ms, Latency: 95 * ms},
				},
			},
			{
				ID: "smoke/auth", Name: "needs auth", Server: "everything", Kind: "tool", Target: "whoami",
				Status: result.Skipped, SkipReason: `dependency "login" did not pass`,
			},
			{
				ID: "smoke/unicode", Name: "unicode ツール 名前 ✓", Server: "everything", Kind: "list", Target: "tools/list",
				Status: result.Passed, Duration: 8 * ms, Latency: 7 * ms,
				Attempts: []result.Attempt{{Status: result.Passed, Duration: 8 * ms, Latency: 7 * ms}},
			},
		},
	}
	slow := &result.Collection{
		Name: "slow paths",
		File: "collections/slow.yaml",
		Servers: []result.Server{
			{Name: "primary", Transport: "http", Target: "http://127.0.0.1:8931/mcp", ProtocolVersion: "2025-06-18", ServerName: "py-mcp", ServerVersion: "0.9.0"},
			{Name: "socket", Transport: "websocket", Target: "ws://127.0.0.1:8932/mcp"},
		},
		StartedAt: t0.Add(1200 * ms),
		Duration:  2000 * ms,
		Tests: []*result.Test{
			{
				ID: "slow/sleep", Name: "sleep # 5s \\ then answer", Server: "primary", Kind: "tool", Target: "sleep",
				Status: result.Errored, Duration: 2000 * ms, Latency: 0,
				Attempts: []result.Attempt{
					{Status: result.Errored, Duration: 1000 * ms, Error: &result.Error{Category: "Deadlock", Message: "no response after 1s"}},
					{Status: result.Errored, Duration: 1000 * ms, Error: &result.Error{Category: "Deadlock", Message: "no response after 1s"}},
				},
				Error:   &result.Error{Category: "Deadlock", Message: "no response after 1s (hang threshold 500ms + grace 500ms)"},
				Request: `{"name":"sleep","arguments":{"seconds":5}}`,
				Stderr:  "INFO starting\npanic: lock held\x00\x07 by init\ngoroutine 7 [semacquire]:",
			},
			{
				ID: "slow/crash", Name: "crash on call", Server: "socket", Kind: "tool", Target: "crash",
				Status: result.Errored, Duration: 30 * ms, Latency: 25 * ms,
				Attempts: []result.Attempt{{Status: result.Errored, Duration: 30 * ms, Latency: 25 * ms, Error: &result.Error{Category: "ServerError", Message: "boom", Code: -32001}}},
				Error:    &result.Error{Category: "ServerError", Message: "boom", Code: -32001, Hint: "the tool raised; see the server log for \"boom\""},
			},
			{
				ID: "slow/read", Name: "read big resource", Server: "primary", Kind: "read", Target: "file:///data/big.json",
				Status: result.Passed, Duration: 1510 * ms, Latency: 1500 * ms,
				Attempts: []result.Attempt{{Status: result.Passed, Duration: 1510 * ms, Latency: 1500 * ms}},
			},
		},
	}
	return &result.Run{
		SchemaVersion: result.SchemaVersion,
		ID:            "01HXFIXED",
		StartedAt:     t0,
		Duration:      3200 * ms,
		Environment:   "staging",
		Git:           &result.Git{Branch: "feature/x", Commit: "0123456789abcdef0123456789abcdef01234567"},
		Collections:   []*result.Collection{smoke, slow},
	}
}

// interruptedRun is a run stopped after its first test.
func interruptedRun() *result.Run {
	return &result.Run{
		SchemaVersion: result.SchemaVersion,
		ID:            "01HXINTR",
		StartedAt:     t0,
		Duration:      50 * time.Millisecond,
		Interrupted:   true,
		Collections: []*result.Collection{{
			Name: "smoke", StartedAt: t0, Duration: 50 * time.Millisecond,
			Tests: []*result.Test{
				{ID: "a", Name: "first", Kind: "tool", Status: result.Passed, Duration: 10 * time.Millisecond, Latency: 9 * time.Millisecond,
					Attempts: []result.Attempt{{Status: result.Passed, Duration: 10 * time.Millisecond, Latency: 9 * time.Millisecond}}},
				{ID: "b", Name: "second", Kind: "tool", Status: result.Skipped, SkipReason: "run interrupted"},
			},
		}},
	}
}

// coverageRun is the passing run with the coverage of its server: tools, prompts and resources
// partly exercised, one kind with more missed items than a summary lists.
func coverageRun() *result.Run {
	r := passingRun()
	missed := []string{}
	for i := range 10 {
		missed = append(missed, fmt.Sprintf("mcptest://static/r%d.txt", i))
	}
	r.Collections[0].Coverage = &result.Coverage{Servers: []result.ServerCoverage{{
		Server:    "default",
		Tools:     &result.KindCoverage{Advertised: 4, Exercised: []string{"echo", "add"}, Missed: []string{"slow", "flaky"}},
		Prompts:   &result.KindCoverage{Advertised: 1, Exercised: []string{}, Missed: []string{"greet"}},
		Resources: &result.KindCoverage{Advertised: 11, Exercised: []string{"mcptest://items/{id}"}, Missed: missed},
	}}}
	return r
}

// bailedRun is a run that --bail stopped after its second test failed.
func bailedRun() *result.Run {
	run := interruptedRun()
	run.BailedAfter = "second"
	tests := run.Collections[0].Tests
	tests[1] = &result.Test{ID: "b", Name: "second", Kind: "tool", Status: result.Failed, Duration: 5 * time.Millisecond, Latency: 4 * time.Millisecond,
		Failures: []result.Failure{{Assertion: "contains", Message: "text does not contain \"b\"", Expected: "b", Actual: "a"}},
		Attempts: []result.Attempt{{Status: result.Failed, Duration: 5 * time.Millisecond, Latency: 4 * time.Millisecond}}}
	run.Collections[0].Tests = append(tests, &result.Test{ID: "c", Name: "third", Kind: "tool", Status: result.Skipped, SkipReason: `not run: --bail stopped the run after "second" did not pass`})
	return run
}

// multilineMessages are failure texts that span lines the ways real ones do: an expr error
// with its caret diagram (lines that start with a space), a first line that starts with a
// space, trailing blanks, an empty line, a line that reads as a YAML document end, unicode and
// a control character.
var multilineMessages = []string{
	"expression \"text + vars.nope\" failed: invalid operation: string + <nil> (1:6)\n | text + vars.nope\n | .....^",
	"  indented first line\nsecond",
	"trailing blank \nnext",
	"para one\n\npara two",
	"before\n...\nafter",
	"héllo wörld 🎉\nline2\nline3",
	"bell \a here\nand more",
}

// multilineRun is one collection whose failed tests carry [multilineMessages], as an error
// message and as an assertion's message and actual value.
func multilineRun() *result.Run {
	col := &result.Collection{Name: "multi", File: "multi.yaml", StartedAt: t0, Duration: time.Second}
	for i, m := range multilineMessages {
		col.Tests = append(col.Tests, &result.Test{
			ID: fmt.Sprintf("m%d", i), Name: fmt.Sprintf("multi %d", i), Kind: "tool", Target: "echo",
			Status: result.Failed, Duration: time.Millisecond, Latency: time.Millisecond,
			Failures: []result.Failure{{Assertion: "expr", Expected: "x", Actual: m, Message: m, Line: 3}},
		})
	}
	return &result.Run{SchemaVersion: result.SchemaVersion, ID: "01HXMULTI", StartedAt: t0, Duration: time.Second,
		Collections: []*result.Collection{col}}
}

// findingsRun has servers that sent what answered no request: a duplicate answer during a test
// that passed, a stray answer during one that --strict failed, and one after the last test.
func findingsRun() *result.Run {
	ms := time.Millisecond
	dup := result.Finding{Server: "flaky", Category: "ProtocolError", Message: "response for id 3, which is not pending (duplicate, or a raw request's)",
		Frame: `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"<b>x</b> & \"y\" # \\"}]}}`}
	stray := result.Finding{Server: "flaky", Category: "ProtocolError", Message: "response with unknown id 1000004 (never issued)",
		Frame: `{"jsonrpc":"2.0","id":1000004,"result":{}}`}
	late := result.Finding{Server: "flaky", Category: "Malformed", Message: "unroutable malformed frame: not JSON", Frame: "oops\x01 ]]> `log`"}
	col := &result.Collection{
		Name: "findings", File: "findings.yaml", StartedAt: t0, Duration: 40 * ms,
		Tests: []*result.Test{
			{ID: "dup", Name: "answered twice", Server: "flaky", Kind: "tool", Target: "echo", Status: result.Passed,
				Duration: 10 * ms, Latency: 9 * ms, Attempts: []result.Attempt{{Status: result.Passed, Duration: 10 * ms, Latency: 9 * ms}},
				Findings: []result.Finding{dup}},
			{ID: "stray", Name: "stray answer first", Server: "flaky", Kind: "tool", Target: "echo", Status: result.Failed,
				Duration: 12 * ms, Latency: 11 * ms,
				Failures: []result.Failure{{Assertion: "strict", Message: "the server sent 1 message that answered no request: " + stray.Message}},
				Attempts: []result.Attempt{{Status: result.Failed, Duration: 12 * ms, Latency: 11 * ms}},
				Findings: []result.Finding{stray}},
		},
		Findings: []result.Finding{late},
	}
	return &result.Run{SchemaVersion: result.SchemaVersion, ID: "01HXFIND", StartedAt: t0, Duration: 40 * ms,
		Collections: []*result.Collection{col}}
}
