package runner_test

import (
	"bufio"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/runner"
)

// failureText joins a test's failure messages.
func failureText(rt *result.Test) string {
	var b strings.Builder
	for _, f := range rt.Failures {
		b.WriteString(f.Message + " | expected " + f.Expected + " | actual " + f.Actual + "\n")
	}
	if rt.Error != nil {
		b.WriteString("error: " + rt.Error.Message)
	}
	return b.String()
}

// TestClientRepliesAndRequests runs the reference server's ask and roots tools (legacy era):
// each test's rules answer first, then the collection's; a kind the collection declares but a
// test gives no reply for is refused; requests: checks what the server asked.
func TestClientRepliesAndRequests(t *testing.T) {
	t.Parallel()
	srv := tcpServer(t, nil)
	col := parse(t, `
name: Client
servers:
  ref: {url: "tcp://ADDR", protocolVersion: "2025-11-25"}
variables: {city: Paris}
client:
  sampling: It is sunny.
  roots: [file:///work]
tests:
  - id: rule-matches
    call: ask
    with: {kind: sampling, message: "weather in {{city}}?"}
    client:
      sampling:
        - when: {contains: "{{city}}"}
          reply: "Rain in {{city}}."
    expect:
      - contains: Rain in Paris.
    requests:
      - method: sampling/createMessage
        count: 1
        expect: [{contains: weather}, {equals: {path: $.maxTokens, value: 100}}]
  - id: collection-reply
    call: ask
    with: {kind: sampling, message: "anything"}
    client:
      sampling: {when: {contains: never}, reply: unused}
    expect:
      - contains: It is sunny.
  - id: roots
    call: roots
    expect:
      - contains: file:///work
    requests: [{method: roots/list}]
  - id: elicitation-declined
    call: ask
    with: {kind: elicitation, message: "name?"}
    client:
      elicitation: {error: {code: -1, message: user said no}}
    expect:
      - isError: true
      - contains: user said no
  - id: elicitation-unanswered
    call: ask
    with: {kind: elicitation, message: "name?"}
    expect:
      - isError: true
      - contains: gives no elicitation/create reply
  - id: requests-fail
    call: ask
    with: {kind: sampling, message: "weather?"}
    requests:
      - {method: sampling/createMessage, count: 2}
      - {method: elicitation/create, count: 0}
      - {method: "sampling/*", expect: {contains: snow}}
`, nil, "ADDR", srv.Addr)
	run, err := runCols(t, &runner.Options{}, col)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"rule-matches", "collection-reply", "roots", "elicitation-declined", "elicitation-unanswered"} {
		if rt := find(t, run, id); rt.Status != result.Passed {
			t.Errorf("%s: %s\n%s", id, rt.Status, failureText(rt))
		}
	}
	rt := find(t, run, "rule-matches")
	if len(rt.Messages) != 1 || rt.Messages[0].Kind != "request" || rt.Messages[0].Method != "sampling/createMessage" ||
		!strings.Contains(rt.Messages[0].Params, "weather in Paris?") || !strings.Contains(rt.Messages[0].Reply, "Rain in Paris.") {
		t.Errorf("messages kept: %+v", rt.Messages)
	}
	if m := find(t, run, "elicitation-declined").Messages; len(m) != 1 || !strings.Contains(m[0].Error, "user said no") {
		t.Errorf("a refused request keeps its error: %+v", m)
	}
	bad := find(t, run, "requests-fail")
	if bad.Status != result.Failed || len(bad.Failures) != 2 {
		t.Fatalf("requests-fail: %s with %d failures\n%s", bad.Status, len(bad.Failures), failureText(bad))
	}
	text := failureText(bad)
	for _, want := range []string{"expected 2 sampling/createMessage requests, got 1", "request #1 (sampling/*)", "snow"} {
		if !strings.Contains(text, want) {
			t.Errorf("failures lack %q:\n%s", want, text)
		}
	}
}

// TestNotificationsOfAStep checks progress (count, increasing), logging (where), order and
// absence against the reference server.
func TestNotificationsOfAStep(t *testing.T) {
	t.Parallel()
	srv := tcpServer(t, nil)
	col := parse(t, `
name: Notifications
servers:
  ref: {url: "tcp://ADDR", protocolVersion: "2025-11-25"}
tests:
  - id: progress
    call: slow
    with: {milliseconds: 40}
    notifications:
      - method: notifications/progress
        count: {min: 3}
        increasing: $.progress
        expect: {exists: $.total}
  - id: logging
    request: {method: logging/setLevel, params: {level: info}}
    notifications:
      - method: notifications/message
        where: {equals: {path: $.level, value: info}}
        count: 1
        expect: {contains: log level set}
  - id: none
    call: echo
    with: {text: hi}
    notifications: [{method: "notifications/*", count: 0}]
  - id: wrong
    call: slow
    with: {milliseconds: 20}
    notifications:
      - {method: notifications/progress, count: {max: 1}}
      - {method: notifications/progress, increasing: $.message}
      - order: [notifications/progress, notifications/message]
`, nil, "ADDR", srv.Addr)
	run, err := runCols(t, &runner.Options{}, col)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"progress", "logging", "none"} {
		if rt := find(t, run, id); rt.Status != result.Passed {
			t.Errorf("%s: %s\n%s", id, rt.Status, failureText(rt))
		}
	}
	if m := find(t, run, "progress").Messages; len(m) < 3 || m[0].Method != "notifications/progress" {
		t.Errorf("progress messages kept: %+v", m)
	}
	if m := find(t, run, "none").Messages; len(m) != 0 {
		t.Errorf("echo kept messages %+v", m)
	}
	wrong := find(t, run, "wrong")
	text := failureText(wrong)
	if wrong.Status != result.Failed || len(wrong.Failures) != 3 {
		t.Fatalf("wrong: %s with %d failures\n%s", wrong.Status, len(wrong.Failures), text)
	}
	for _, want := range []string{"expected at most 1 notifications/progress notifications", "did not increase", "did not come in the order notifications/progress, notifications/message", "notifications/progress ×"} {
		if !strings.Contains(text, want) {
			t.Errorf("failures lack %q:\n%s", want, text)
		}
	}
}

// TestInputRequestsAnsweredByRules checks the stateless era's MRTR input requests go through
// the test's rules and count as requests.
func TestInputRequestsAnsweredByRules(t *testing.T) {
	t.Parallel()
	srv := tcpServer(t, nil)
	col := parse(t, `
name: MRTR
server: tcp://ADDR
tests:
  - id: confirm
    call: confirm
    with: {message: "Deploy?"}
    client:
      elicitation:
        - when: {contains: "Deploy?"}
          reply: {action: accept, content: {confirmed: true}}
    expect: [{contains: "confirmed: Deploy?"}]
    requests: [{method: elicitation/create, count: 1}]
`, nil, "ADDR", srv.Addr)
	run, err := runCols(t, &runner.Options{}, col)
	if err != nil {
		t.Fatal(err)
	}
	if rt := find(t, run, "confirm"); rt.Status != result.Passed {
		t.Fatalf("confirm: %s\n%s", rt.Status, failureText(rt))
	}
}

// lateNotifier is a minimal MCP server over TCP (legacy era) whose tools/call answers at once
// and sends a notifications/message some time after the answer.
func lateNotifier(t *testing.T, after time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.Close()
				var mu sync.Mutex
				write := func(s string) {
					mu.Lock()
					defer mu.Unlock()
					_, _ = conn.Write([]byte(s + "\n"))
				}
				sc := bufio.NewScanner(conn)
				for sc.Scan() {
					var m struct {
						ID     json.RawMessage `json:"id"`
						Method string          `json:"method"`
					}
					if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil {
						continue
					}
					id := string(m.ID)
					switch m.Method {
					case "initialize":
						write(`{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"logging":{}},"serverInfo":{"name":"late","version":"1"}}}`)
					case "tools/list":
						write(`{"jsonrpc":"2.0","id":` + id + `,"result":{"tools":[{"name":"go","inputSchema":{"type":"object"}}]}}`)
					case "tools/call":
						write(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"started"}]}}`)
						wg.Add(1)
						go func() {
							defer wg.Done()
							time.Sleep(after)
							write(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"done later"}}`)
						}()
					default:
						write(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32601,"message":"no"}}`)
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// TestWaitForLateNotifications checks that wait: keeps checking for notifications that come
// after the step's answer, up to its bound.
func TestWaitForLateNotifications(t *testing.T) {
	t.Parallel()
	addr := lateNotifier(t, 200*time.Millisecond)
	col := parse(t, `
name: Late
server: {url: "tcp://ADDR", protocolVersion: "2025-06-18"}
tests:
  - id: waits
    call: go
    notifications:
      - method: notifications/message
        count: 1
        wait: 10s
        expect: {contains: done later}
`, nil, "ADDR", addr)
	run, err := runCols(t, &runner.Options{}, col)
	if err != nil {
		t.Fatal(err)
	}
	if rt := find(t, run, "waits"); rt.Status != result.Passed {
		t.Fatalf("waits: %s\n%s", rt.Status, failureText(rt))
	}
}
