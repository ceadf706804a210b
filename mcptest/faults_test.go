package mcptest_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/mcptest"
)

// silence is how long a test listens to assert that a call is never answered.
const silence = 300 * time.Millisecond

func echoCall(text string) map[string]any { return toolCall("echo", map[string]any{"text": text}) }

func TestHangFirstCall(t *testing.T) {
	s, c := startTCP(t, &mcptest.Options{HangFirstCall: true})
	c.initialize()
	first := c.request("tools/call", echoCall("first"))
	// The second call is answered while the first stays in flight forever.
	m := c.call("tools/call", echoCall("second"))
	if m.Error != nil || !strings.Contains(string(m.Result), "second") {
		t.Fatalf("second call: %s", m.raw)
	}
	if st := s.Stats(); st.InFlight != 1 || st.ToolCalls != 2 {
		t.Errorf("stats %+v, want the first call still in flight", st)
	}
	if m := c.call("ping", nil); m.Error != nil {
		t.Errorf("ping: %s", m.raw)
	}
	c.expectSilence(silence)
	_ = first
}

func TestHangWhenConcurrent(t *testing.T) {
	s, c := startTCP(t, &mcptest.Options{HangWhenConcurrent: true})
	c.initialize()
	// One call alone is answered.
	if m := c.call("tools/call", echoCall("alone")); m.Error != nil {
		t.Fatalf("lone call: %s", m.raw)
	}
	// A call arriving while another is in flight deadlocks both.
	c.request("tools/call", toolCall("slow", map[string]any{"milliseconds": 50}))
	waitStats(t, s.Stats, func(st mcptest.Stats) bool { return st.InFlight == 1 })
	c.request("tools/call", echoCall("overlapping"))
	waitStats(t, s.Stats, func(st mcptest.Stats) bool { return st.InFlight == 2 })
	c.expectSilence(silence) // slow(50) would have answered by now
	// The deadlock persists: a later call hangs too, while ping still works.
	c.request("tools/call", echoCall("later"))
	if m := c.call("ping", nil); m.Error != nil {
		t.Errorf("ping: %s", m.raw)
	}
	waitStats(t, s.Stats, func(st mcptest.Stats) bool { return st.InFlight == 3 && st.MaxInFlight == 3 })
	c.expectSilence(silence / 3)
}

func TestCrashRate(t *testing.T) {
	const seed = "crash-seed"
	var hook atomic.Int64
	s := mcptest.NewTCPServer(&mcptest.Options{CrashRate: 0.5, Seed: seed, Crash: func() { hook.Add(1) }})
	t.Cleanup(s.Close)

	// Call n crashes exactly when FlakyRoll(seed, n) < 0.5; a crash drops the connection, so
	// the client reconnects, as it would restart a process.
	crashes := 0
	c := dialTCP(t, s)
	c.initialize()
	for n := int64(1); n <= 8; n++ {
		wantCrash := mcptest.FlakyRoll(seed, n) < 0.5
		c.request("tools/call", echoCall(fmt.Sprint(n)))
		if wantCrash {
			crashes++
			c.expectClosed()
			c = dialTCP(t, s)
			c.initialize()
			continue
		}
		if m := c.recvResponse(); m.Error != nil {
			t.Fatalf("call %d: %s", n, m.raw)
		}
	}
	if crashes == 0 || crashes == 8 {
		t.Fatalf("seed gives %d crashes of 8; pick a seed that exercises both outcomes", crashes)
	}
	if st := s.Stats(); st.Crashes != int64(crashes) || hook.Load() != int64(crashes) {
		t.Errorf("stats %+v, hook %d, want %d crashes", st, hook.Load(), crashes)
	}
}

func TestCrashServeConnReturnsErrCrashed(t *testing.T) {
	b := mcptest.NewBackend(&mcptest.Options{CrashRate: 1})
	defer b.Close()
	cr, sw := pipe()
	sr, cw := pipe()
	done := make(chan error, 1)
	go func() { done <- b.ServeConn(t.Context(), sr, sw) }()
	c := newLineClient(t, cr, cw, cw)
	c.initialize()
	c.request("tools/call", echoCall("x"))
	c.expectClosed()
	select {
	case err := <-done:
		if err != mcptest.ErrCrashed {
			t.Errorf("ServeConn = %v, want ErrCrashed", err)
		}
	case <-time.After(waitFor):
		t.Fatal("ServeConn did not return after the crash")
	}
}

func TestLeak(t *testing.T) {
	s, c := startTCP(t, &mcptest.Options{LeakKBPerCall: 64})
	c.initialize()
	for range 3 {
		c.call("tools/call", echoCall("x"))
	}
	if st := s.Stats(); st.LeakedBytes != 3*64*1024 {
		t.Errorf("leaked %d bytes, want %d", st.LeakedBytes, 3*64*1024)
	}
}

func TestMalformedEvery(t *testing.T) {
	s, c := startTCP(t, &mcptest.Options{MalformedEvery: 2})
	c.initialize()
	c.call("tools/list", nil) // not a tools/call: never malformed
	for n := 1; n <= 4; n++ {
		id := c.request("tools/call", echoCall("some text long enough to cut"))
		line := c.recvRaw()
		valid := json.Valid(line)
		if want := n%2 == 1; valid != want {
			t.Errorf("call %d: valid=%v, want %v: %s", n, valid, want, line)
		}
		prefix := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,`, id)
		if !strings.HasPrefix(string(line), prefix) {
			t.Errorf("call %d: frame %s lacks the id prefix %s", n, line, prefix)
		}
	}
	if st := s.Stats(); st.Malformed != 2 {
		t.Errorf("stats.Malformed = %d, want 2", st.Malformed)
	}
	if m := c.call("ping", nil); m.Error != nil {
		t.Errorf("connection unusable after malformed frames: %s", m.raw)
	}
}

func TestSlowInitialize(t *testing.T) {
	const delay = 150 * time.Millisecond
	for _, method := range []string{"initialize", "server/discover"} {
		_, c := startTCP(t, &mcptest.Options{SlowInitialize: delay})
		start := time.Now()
		m := c.call(method, map[string]any{"protocolVersion": "2025-11-25"})
		if m.Error != nil {
			t.Fatalf("%s: %s", method, m.raw)
		}
		if elapsed := time.Since(start); elapsed < delay {
			t.Errorf("%s answered after %v, want >= %v", method, elapsed, delay)
		}
	}
}

func TestErrorCycle(t *testing.T) {
	_, c := startTCP(t, &mcptest.Options{ErrorCycle: true})
	c.initialize()
	var got []int
	for range 5 {
		m := c.call("tools/call", echoCall("x"))
		if m.Error == nil {
			t.Fatalf("result %s, want an error", m.raw)
		}
		got = append(got, m.Error.Code)
	}
	want := []int{-32601, -32602, -32603, -32000, -32601}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("codes %v, want %v", got, want)
	}
}

func TestDivergent(t *testing.T) {
	s, c := startTCP(t, &mcptest.Options{Divergent: true})
	c.initialize()
	slow := toolCall("slow", map[string]any{"milliseconds": 100})
	var alone toolResult
	c.result("tools/call", slow, &alone)
	if alone.text() != "slept 100ms" {
		t.Errorf("lone call: %q", alone.text())
	}
	c.request("tools/call", slow)
	waitStats(t, s.Stats, func(st mcptest.Stats) bool { return st.InFlight == 1 })
	c.request("tools/call", slow)
	texts := map[string]bool{}
	for range 2 {
		var r toolResult
		if err := json.Unmarshal(c.recvResponse().Result, &r); err != nil {
			t.Fatal(err)
		}
		texts[r.text()] = true
	}
	if len(texts) != 2 {
		t.Errorf("identical concurrent calls gave identical answers: %v", texts)
	}
	for text := range texts {
		if !strings.HasPrefix(text, "slept 100ms [divergent #") {
			t.Errorf("answer %q", text)
		}
	}
}

func TestWrongID(t *testing.T) {
	_, c := startTCP(t, &mcptest.Options{WrongID: true})
	c.initialize()
	for _, tt := range []struct {
		id   any
		want string
	}{{7, "1007"}, {"abc", `"abc+1000"`}, {-5, "995"}} {
		c.send(tt.id, "tools/call", echoCall("x"))
		if m := c.recv(); string(m.ID) != tt.want {
			t.Errorf("id %v answered as %s, want %s", tt.id, m.ID, tt.want)
		}
	}
}

func TestBothResultAndError(t *testing.T) {
	_, c := startTCP(t, &mcptest.Options{BothResultAndError: true})
	c.initialize()
	m := c.call("tools/call", echoCall("x"))
	if m.Error == nil || len(m.Result) == 0 || !strings.Contains(string(m.Result), `"text":"x"`) {
		t.Errorf("frame %s, want both result and error", m.raw)
	}
}

func TestDuplicateAnswers(t *testing.T) {
	_, c := startTCP(t, &mcptest.Options{DuplicateAnswers: true})
	c.initialize()
	c.send(7, "tools/call", echoCall("x"))
	first, second := c.recv(), c.recv()
	if string(first.ID) != "7" || string(second.raw) != string(first.raw) {
		t.Errorf("frames %s then %s, want the answer to 7 twice", first.raw, second.raw)
	}
	// Only tools/call is answered twice.
	c.send(8, "tools/list", nil)
	if m := c.recv(); string(m.ID) != "8" {
		t.Fatalf("tools/list answered %s", m.raw)
	}
	c.expectSilence(100 * time.Millisecond)
}

func TestStrayAnswer(t *testing.T) {
	_, c := startTCP(t, &mcptest.Options{StrayAnswer: true})
	c.initialize()
	for _, tt := range []struct {
		id         any
		stray, id2 string
	}{{7, "1000007", "7"}, {"abc", `"abc+stray"`, `"abc"`}} {
		c.send(tt.id, "tools/call", echoCall("x"))
		if stray, real := c.recv(), c.recv(); string(stray.ID) != tt.stray || string(real.ID) != tt.id2 {
			t.Errorf("id %v: frames %s then %s, want a stray %s first", tt.id, stray.raw, real.raw, tt.stray)
		}
	}
}

func TestSerialize(t *testing.T) {
	s, c := startTCP(t, &mcptest.Options{Serialize: true})
	c.initialize()
	slowSent := time.Now()
	slowID := c.request("tools/call", toolCall("slow", map[string]any{"milliseconds": 200}))
	waitStats(t, s.Stats, func(st mcptest.Stats) bool { return st.InFlight == 1 })
	echoID := c.request("tools/call", echoCall("fast"))
	// The echo waits behind the slow call: it is answered only once the slow call is done. (The
	// two answers may reach the wire in either order: the slot is freed as the slow handler
	// returns, just before its answer is written.)
	var echoWait time.Duration // from the slow call's sending
	got := map[string]bool{}
	for range 2 {
		id := string(c.recvResponse().ID)
		got[id] = true
		if id == fmt.Sprint(echoID) {
			echoWait = time.Since(slowSent)
		}
	}
	if !got[fmt.Sprint(slowID)] || !got[fmt.Sprint(echoID)] {
		t.Fatalf("answers %v, want %v and %v", got, slowID, echoID)
	}
	// The slow call runs 200ms from its arrival; a lower bound only grows on a slow machine.
	if echoWait < 200*time.Millisecond {
		t.Errorf("the echo was answered after %v: it did not wait for the slow call", echoWait)
	}
	if st := s.Stats(); st.MaxInFlight != 1 {
		t.Errorf("MaxInFlight %d, want 1: calls ran at once", st.MaxInFlight)
	}
	// Without the mode the echo overtakes the slow call.
	s2, c2 := startTCP(t, nil)
	c2.initialize()
	c2.request("tools/call", toolCall("slow", map[string]any{"milliseconds": 200}))
	waitStats(t, s2.Stats, func(st mcptest.Stats) bool { return st.InFlight == 1 })
	id := c2.request("tools/call", echoCall("fast"))
	if m := c2.recvResponse(); string(m.ID) != fmt.Sprint(id) {
		t.Errorf("without Serialize the first answer is %s, want the echo %d", m.ID, id)
	}
}

func TestWorkers(t *testing.T) {
	s, c := startTCP(t, &mcptest.Options{Workers: 2})
	c.initialize()
	for range 3 {
		c.request("tools/call", toolCall("slow", map[string]any{"milliseconds": 100}))
	}
	for range 3 {
		if m := c.recvResponse(); m.Error != nil {
			t.Fatalf("slow call: %s", m.raw)
		}
	}
	if st := s.Stats(); st.MaxInFlight != 2 {
		t.Errorf("MaxInFlight %d, want 2 with two workers", st.MaxInFlight)
	}
}

func TestLazyInitDeadlock(t *testing.T) {
	t.Run("one at a time", func(t *testing.T) {
		_, c := startTCP(t, &mcptest.Options{LazyInitDeadlock: 50 * time.Millisecond})
		c.initialize()
		for i := range 3 {
			if m := c.call("tools/call", echoCall(fmt.Sprint(i))); m.Error != nil {
				t.Fatalf("call %d: %s", i, m.raw)
			}
		}
	})
	t.Run("concurrent during the initialization", func(t *testing.T) {
		s, c := startTCP(t, &mcptest.Options{LazyInitDeadlock: 200 * time.Millisecond})
		c.initialize()
		c.request("tools/call", echoCall("first"))
		waitStats(t, s.Stats, func(st mcptest.Stats) bool { return st.InFlight == 1 })
		c.request("tools/call", echoCall("second"))
		c.expectSilence(400 * time.Millisecond) // the initialization would have ended by now
		c.request("tools/call", echoCall("later"))
		if m := c.call("ping", nil); m.Error != nil {
			t.Errorf("ping: %s", m.raw)
		}
		waitStats(t, s.Stats, func(st mcptest.Stats) bool { return st.InFlight == 3 })
	})
}

func TestCrossTalk(t *testing.T) {
	s, c := startTCP(t, &mcptest.Options{CrossTalk: true})
	c.initialize()
	var alone toolResult
	c.result("tools/call", echoCall("alone"), &alone)
	if alone.text() != "alone" {
		t.Errorf("lone call answered %q", alone.text())
	}
	a := c.request("tools/call", echoCall("a"))
	waitStats(t, s.Stats, func(st mcptest.Stats) bool { return st.InFlight == 1 })
	c.request("tools/call", echoCall("b"))
	got := map[string]string{}
	for range 2 {
		m := c.recvResponse()
		var r toolResult
		if err := json.Unmarshal(m.Result, &r); err != nil {
			t.Fatal(err)
		}
		got[string(m.ID)] = r.text()
	}
	if got[fmt.Sprint(a)] != "b" {
		t.Errorf("answers %v: call a should carry b's text (the last writer of the shared buffer)", got)
	}
}

func TestTimeTool(t *testing.T) {
	_, c := startTCP(t, &mcptest.Options{TimeTool: true})
	c.initialize()
	var r toolResult
	c.result("tools/call", toolCall("time", nil), &r)
	ts, err := time.Parse(time.RFC3339Nano, r.text())
	if err != nil || time.Since(ts).Abs() > time.Minute {
		t.Errorf("time answered %q (%v)", r.text(), err)
	}
	if !strings.Contains(string(r.StructuredContent), r.text()) {
		t.Errorf("structuredContent %s does not hold %q", r.StructuredContent, r.text())
	}
	_, plain := startTCP(t, nil)
	plain.initialize()
	if m := plain.call("tools/call", toolCall("time", nil)); m.Error == nil {
		t.Errorf("time exists without TimeTool: %s", m.raw)
	}
}
