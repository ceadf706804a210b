package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/internal/poll"
	"github.com/mcpspec/mcpspec/session/transport"
)

func TestOpenLegacyHandshake(t *testing.T) {
	f, d := newFake(t, nil)
	s := open(t, d, nil)
	if s.Era() != EraLegacy || s.ProtocolVersion() != Version20251125 {
		t.Fatalf("era %s version %s, want legacy %s", s.Era(), s.ProtocolVersion(), Version20251125)
	}
	if got := s.ServerInfo(); got.Name != "fake" {
		t.Errorf("ServerInfo = %+v", got)
	}
	if s.Instructions() != "be nice" || !strings.Contains(string(s.ServerCapabilities()), "listChanged") {
		t.Errorf("instructions %q caps %s", s.Instructions(), s.ServerCapabilities())
	}
	poll.Until(t, 5*time.Second, "notifications/initialized", func() bool { return len(f.received("notifications/initialized")) == 1 })
	methods := []string{}
	for _, m := range f.received("") {
		methods = append(methods, m.Method)
	}
	want := []string{"server/discover", "initialize", "notifications/initialized"}
	if diff := cmp.Diff(want, methods); diff != "" {
		t.Errorf("handshake frames (-want +got):\n%s", diff)
	}
	if v := f.end.ProtocolVersion(); v != Version20251125 {
		t.Errorf("SetProtocolVersion got %q", v)
	}
	// Capabilities are declared honestly: nothing configured, nothing declared.
	init := f.received("initialize")[0]
	var p struct {
		Capabilities json.RawMessage `json:"capabilities"`
		ClientInfo   Implementation  `json:"clientInfo"`
	}
	if err := json.Unmarshal(init.Params, &p); err != nil {
		t.Fatal(err)
	}
	if string(p.Capabilities) != "{}" || p.ClientInfo.Name != "mcpspec" {
		t.Errorf("initialize params %s", init.Params)
	}
}

func TestCorrelationOutOfOrder(t *testing.T) {
	const n = 1000
	var mu sync.Mutex
	var calls []msg
	f, d := newFake(t, func(f *fake, m msg) {
		if m.Method != "tools/call" {
			f.defaults(m)
			return
		}
		mu.Lock()
		calls = append(calls, m)
		full := len(calls) == n
		mu.Unlock()
		if !full {
			return
		}
		// Answer all of them in a random order, from several goroutines.
		rand.Shuffle(len(calls), func(i, j int) { calls[i], calls[j] = calls[j], calls[i] })
		var wg sync.WaitGroup
		for part := range 4 {
			wg.Go(func() {
				for i := part; i < n; i += 4 {
					f.defaults(calls[i])
				}
			})
		}
		wg.Wait()
	})
	_ = f
	s := open(t, d, nil)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			res, err := s.CallTool(context.Background(), "echo", map[string]any{"i": i}, nil)
			if err != nil {
				errs <- err
				return
			}
			var got struct{ I int }
			if err := json.Unmarshal(res.StructuredContent, &got); err != nil || got.I != i {
				errs <- fmt.Errorf("call %d got %s", i, res.StructuredContent)
			}
			if res.Timing.Latency <= 0 || res.Timing.Received.Before(res.Timing.Sent) {
				errs <- fmt.Errorf("call %d timing %+v", i, res.Timing)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Ids are unique.
	seen := map[string]bool{}
	for _, m := range f.received("tools/call") {
		if seen[string(m.ID)] {
			t.Fatalf("id %s reused", m.ID)
		}
		seen[string(m.ID)] = true
	}
	if len(s.Findings()) != 0 {
		t.Errorf("findings: %+v", s.Findings())
	}
}

// faultCase scripts how the fake answers one tools/call.
type faultCase struct {
	name string
	opts Options
	// answer runs on the fake's goroutine for the tools/call.
	answer func(f *fake, m msg)
	// ctx derives the call's context (cancel tests).
	ctx  func(parent context.Context, f *fake) (context.Context, context.CancelFunc)
	want Category
	// check asserts more about the error.
	check func(t *testing.T, e *Error, s *Session, f *fake)
}

func TestFaultCategories(t *testing.T) {
	exit := &transport.ExitError{Code: 2, StderrTail: "panic: boom"}
	cases := []faultCase{
		{
			name:   "server error code",
			answer: func(f *fake, m msg) { f.errorReply(m, -32000, "tool exploded") },
			want:   ServerError,
			check: func(t *testing.T, e *Error, _ *Session, _ *fake) {
				if e.Code != -32000 || e.Message != "tool exploded" {
					t.Errorf("code %d message %q", e.Code, e.Message)
				}
			},
		},
		{
			name:   "invalid params is a protocol error",
			answer: func(f *fake, m msg) { f.errorReply(m, -32602, "bad args") },
			want:   ProtocolError,
		},
		{
			name: "both result and error",
			answer: func(f *fake, m msg) {
				f.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{},"error":{"code":1,"message":"x"}}`)
			},
			want: ProtocolError,
			check: func(t *testing.T, e *Error, _ *Session, _ *fake) {
				if !strings.Contains(string(e.Frame), `"error"`) || !strings.Contains(e.Message, "both") {
					t.Errorf("frame %s message %q", e.Frame, e.Message)
				}
			},
		},
		{
			name:   "wrong jsonrpc",
			answer: func(f *fake, m msg) { f.send(`{"jsonrpc":"1.0","id":` + string(m.ID) + `,"result":{}}`) },
			want:   ProtocolError,
		},
		{
			name:   "string id",
			answer: func(f *fake, m msg) { f.send(`{"jsonrpc":"2.0","id":"` + string(m.ID) + `","result":{}}`) },
			want:   ProtocolError,
		},
		{
			name:   "neither result nor error",
			answer: func(f *fake, m msg) { f.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `}`) },
			want:   ProtocolError,
		},
		{
			name: "truncated frame with salvaged id",
			answer: func(f *fake, m msg) {
				data := []byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"content":[{"ty`)
				_ = f.end.SendFrame(context.Background(), transport.Frame{Data: data, Err: &transport.FrameError{Reason: "truncated", Size: len(data)}})
			},
			want: Malformed,
			check: func(t *testing.T, e *Error, _ *Session, _ *fake) {
				var fe *transport.FrameError
				if !errors.As(e, &fe) || fe.Reason != "truncated" || !strings.Contains(string(e.Frame), `"content"`) {
					t.Errorf("err %v frame %s", e.Err, e.Frame)
				}
			},
		},
		{
			name:   "invalid JSON with salvaged id",
			answer: func(f *fake, m msg) { f.send(`{"jsonrpc":"2.0", "id" : ` + string(m.ID) + `,"result":{"a":}}`) },
			want:   Malformed,
		},
		{
			name: "invalid UTF-8",
			answer: func(f *fake, m msg) {
				f.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"a":"` + "\xff\xfe" + `"}}`)
			},
			want: Malformed,
		},
		{
			name:   "unroutable malformed then timeout",
			opts:   Options{RequestTimeout: 80 * time.Millisecond},
			answer: func(f *fake, m msg) { f.send(`{"jsonrpc":"2.0","result":{"oops"`) },
			want:   Malformed,
			check: func(t *testing.T, e *Error, s *Session, _ *fake) {
				if !strings.Contains(string(e.Frame), "oops") {
					t.Errorf("frame %s", e.Frame)
				}
				if fs := s.Findings(); len(fs) != 1 || fs[0].Category != Malformed {
					t.Errorf("findings %+v", fs)
				}
			},
		},
		{
			name:   "answer under a wrong id then timeout",
			opts:   Options{RequestTimeout: 80 * time.Millisecond},
			answer: func(f *fake, m msg) { f.send(`{"jsonrpc":"2.0","id":987654,"result":{"content":[]}}`) },
			want:   ProtocolError,
			check: func(t *testing.T, e *Error, s *Session, _ *fake) {
				if !strings.Contains(string(e.Frame), "987654") || !strings.Contains(e.Message, "unknown id 987654") {
					t.Errorf("frame %s message %q", e.Frame, e.Message)
				}
				if fs := s.Findings(); len(fs) != 1 || fs[0].Category != ProtocolError {
					t.Errorf("findings %+v", fs)
				}
			},
		},
		{
			name:   "timeout sends notifications/cancelled",
			opts:   Options{RequestTimeout: 50 * time.Millisecond},
			answer: func(*fake, msg) {},
			want:   Timeout,
			check:  checkCancelledSent,
		},
		{
			name:   "caller cancels",
			answer: func(*fake, msg) {},
			ctx: func(parent context.Context, f *fake) (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(parent)
				go func() {
					poll.Until(t, 5*time.Second, "tools/call at the server", func() bool { return len(f.received("tools/call")) > 0 })
					cancel()
				}()
				return ctx, cancel
			},
			want:  Cancelled,
			check: checkCancelledSent,
		},
		{
			name:   "ctx deadline is a timeout",
			answer: func(*fake, msg) {},
			ctx: func(parent context.Context, _ *fake) (context.Context, context.CancelFunc) {
				return context.WithTimeout(parent, 40*time.Millisecond)
			},
			want: Timeout,
		},
		{
			name: "hang: late answer within grace",
			opts: Options{HangThreshold: 30 * time.Millisecond, HangGrace: 2 * time.Second},
			answer: func(f *fake, m msg) {
				time.AfterFunc(80*time.Millisecond, func() { f.result(m, `{"content":[]}`) })
			},
			want: Hang,
			check: func(t *testing.T, e *Error, _ *Session, _ *fake) {
				if e.Response == nil || string(e.Response.Result) != `{"content":[]}` || e.Elapsed < 80*time.Millisecond {
					t.Errorf("response %+v elapsed %v", e.Response, e.Elapsed)
				}
			},
		},
		{
			name:   "deadlock: no answer within threshold plus grace",
			opts:   Options{HangThreshold: 20 * time.Millisecond, HangGrace: 30 * time.Millisecond, RequestTimeout: 5 * time.Second},
			answer: func(*fake, msg) {},
			want:   Deadlock,
			check: func(t *testing.T, e *Error, _ *Session, _ *fake) {
				if e.Elapsed < 50*time.Millisecond || e.Elapsed > 2*time.Second {
					t.Errorf("elapsed %v", e.Elapsed)
				}
			},
		},
		{
			name:   "request timeout beats the hang detector",
			opts:   Options{HangThreshold: 200 * time.Millisecond, RequestTimeout: 30 * time.Millisecond},
			answer: func(*fake, msg) {},
			want:   Timeout,
		},
		{
			name:   "crash",
			answer: func(f *fake, _ msg) { f.end.Fail(exit) },
			want:   Crash,
			check: func(t *testing.T, e *Error, s *Session, _ *fake) {
				if !strings.Contains(e.Hint, "panic: boom") || !errors.Is(e, exit) {
					t.Errorf("hint %q err %v", e.Hint, e.Err)
				}
				// Later calls fail at once with the same category.
				_, err := s.CallTool(context.Background(), "again", nil, nil)
				if CategoryOf(err) != Crash {
					t.Errorf("after crash: %v", err)
				}
			},
		},
		{
			name:   "disconnected",
			answer: func(f *fake, _ msg) { _ = f.end.Close() },
			want:   Disconnected,
		},
		{
			// An orderly exit mid-call (status 0, nothing on stderr) is the server leaving.
			name:   "clean exit is disconnected",
			answer: func(f *fake, _ msg) { f.end.Fail(&transport.ExitError{Code: 0}) },
			want:   Disconnected,
		},
		{
			name:   "exit 0 with a crash report is a crash",
			answer: func(f *fake, _ msg) { f.end.Fail(&transport.ExitError{Code: 0, StderrTail: "panic: boom\n"}) },
			want:   Crash,
		},
		{
			name:   "exit 1 is a crash",
			answer: func(f *fake, _ msg) { f.end.Fail(&transport.ExitError{Code: 1}) },
			want:   Crash,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, d := newFake(t, func(f *fake, m msg) {
				if m.Method == "tools/call" {
					tc.answer(f, m)
					return
				}
				f.defaults(m)
			})
			o := tc.opts
			s := open(t, d, &o)
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if tc.ctx != nil {
				ctx, cancel = tc.ctx(ctx, f)
			}
			defer cancel()
			res, err := s.CallTool(ctx, "t", map[string]any{"x": 1}, nil)
			if res != nil {
				t.Errorf("result %+v with a failure", res)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if e.Category != tc.want || e.Method != "tools/call" || e.ID == 0 {
				t.Fatalf("got %s (%v), want %s", e.Category, e, tc.want)
			}
			if tc.check != nil {
				tc.check(t, e, s, f)
			}
		})
	}
}

func checkCancelledSent(t *testing.T, e *Error, _ *Session, f *fake) {
	t.Helper()
	poll.Until(t, 5*time.Second, "notifications/cancelled", func() bool { return len(f.received("notifications/cancelled")) == 1 })
	var p struct {
		RequestID int64  `json:"requestId"`
		Reason    string `json:"reason"`
	}
	if err := json.Unmarshal(f.received("notifications/cancelled")[0].Params, &p); err != nil || p.RequestID != e.ID || p.Reason == "" {
		t.Errorf("cancelled params %+v (err %v), want requestId %d", p, err, e.ID)
	}
}

func TestFindings(t *testing.T) {
	release := make(chan struct{})
	f, d := newFake(t, func(f *fake, m msg) {
		switch m.Method {
		case "tools/call":
			var p struct{ Name string }
			_ = json.Unmarshal(m.Params, &p)
			switch p.Name {
			case "dup":
				f.result(m, `{"content":[]}`)
				f.result(m, `{"content":[]}`)
			case "late":
				go func() { <-release; f.result(m, `{"content":[]}`) }()
			}
		default:
			f.defaults(m)
		}
	})
	var mu sync.Mutex
	var seen []Finding
	s := open(t, d, &Options{RequestTimeout: 40 * time.Millisecond, OnFinding: func(x Finding) {
		mu.Lock()
		seen = append(seen, x)
		mu.Unlock()
	}})
	ctx := context.Background()
	if _, err := s.CallTool(ctx, "dup", nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CallTool(ctx, "late", nil, nil); CategoryOf(err) != Timeout {
		t.Fatalf("late call: %v", err)
	}
	close(release)
	poll.Until(t, 5*time.Second, "the late response", func() bool { return len(s.Findings()) == 2 })
	f.send(`{"jsonrpc":"2.0","id":999999,"result":{}}`)
	f.send(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)
	poll.Until(t, 5*time.Second, "4 findings", func() bool { return len(s.Findings()) == 4 })
	msgs := []string{}
	for _, x := range s.Findings() {
		msgs = append(msgs, x.Message)
	}
	for i, want := range []string{"not pending", "late response", "never issued", "null id carrying error -32700"} {
		if !strings.Contains(msgs[i], want) {
			t.Errorf("finding %d = %q, want it to mention %q", i, msgs[i], want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 4 {
		t.Errorf("OnFinding saw %d", len(seen))
	}
}

func TestCloseFailsPendingAsCancelled(t *testing.T) {
	_, d := newFake(t, func(f *fake, m msg) {
		if m.Method != "tools/call" {
			f.defaults(m)
		}
	})
	s := open(t, d, nil)
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := s.CallTool(context.Background(), "never", nil, nil)
			errs <- err
		}()
	}
	poll.Until(t, 5*time.Second, "3 pending", func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(s.sh.pending) == 3 })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := <-errs; CategoryOf(err) != Cancelled || !errors.Is(err, ErrClosed) {
			t.Errorf("pending call after Close: %v", err)
		}
	}
	if _, err := s.CallTool(context.Background(), "x", nil, nil); CategoryOf(err) != Cancelled {
		t.Errorf("call after Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestProgressAndNotifications(t *testing.T) {
	_, d := newFake(t, func(f *fake, m msg) {
		if m.Method != "tools/call" {
			f.defaults(m)
			return
		}
		var p struct {
			Meta struct {
				ProgressToken json.RawMessage `json:"progressToken"`
			} `json:"_meta"`
		}
		_ = json.Unmarshal(m.Params, &p)
		for i := 1; i <= 3; i++ {
			f.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d,"total":3,"message":"step %d"}}`, p.Meta.ProgressToken, i, i))
		}
		f.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
		f.result(m, `{"content":[],"isError":true}`)
	})
	var mu sync.Mutex
	var notes []string
	s := open(t, d, &Options{OnNotification: func(n Notification) {
		mu.Lock()
		notes = append(notes, n.Method)
		mu.Unlock()
	}})
	var got []Progress
	res, err := s.CallTool(context.Background(), "slow", nil, &CallOptions{OnProgress: func(p Progress) { got = append(got, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError {
		t.Error("isError lost")
	}
	want := []Progress{{1, 3, "step 1"}, {2, 3, "step 2"}, {3, 3, "step 3"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	wantNotes := []string{"notifications/progress", "notifications/progress", "notifications/progress", "notifications/tools/list_changed"}
	if diff := cmp.Diff(wantNotes, notes); diff != "" {
		t.Errorf("notifications (-want +got):\n%s", diff)
	}
}

// TestProgressIsSignOfLife: a call that streams progress for longer than the hang threshold plus
// grace is alive, not deadlocked; once the progress stops, the threshold counts from the last.
func TestProgressIsSignOfLife(t *testing.T) {
	progressFor := func(steps int, gap time.Duration, answer bool) func(f *fake, m msg) {
		return func(f *fake, m msg) {
			if m.Method != "tools/call" {
				f.defaults(m)
				return
			}
			var p struct {
				Meta struct {
					ProgressToken json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			}
			_ = json.Unmarshal(m.Params, &p)
			go func() {
				for i := 1; i <= steps; i++ {
					time.Sleep(gap) // pacing the fake server, not synchronising the test
					f.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d}}`, p.Meta.ProgressToken, i))
				}
				if answer {
					f.result(m, `{"content":[]}`)
				}
			}()
		}
	}
	opts := Options{HangThreshold: 250 * time.Millisecond, HangGrace: 250 * time.Millisecond, RequestTimeout: 20 * time.Second}

	t.Run("streaming", func(t *testing.T) {
		_, d := newFake(t, progressFor(16, 50*time.Millisecond, true))
		o := opts
		s := open(t, d, &o)
		var n atomic.Int32
		start := time.Now()
		if _, err := s.CallTool(context.Background(), "slow", nil, &CallOptions{OnProgress: func(Progress) { n.Add(1) }}); err != nil {
			t.Fatalf("a call streaming progress for %v failed: %v", time.Since(start), err)
		}
		if n.Load() != 16 {
			t.Errorf("progress notifications = %d, want 16", n.Load())
		}
	})
	t.Run("silent after progress", func(t *testing.T) {
		_, d := newFake(t, progressFor(2, 50*time.Millisecond, false))
		o := opts
		s := open(t, d, &o)
		start := time.Now()
		_, err := s.CallTool(context.Background(), "stuck", nil, &CallOptions{OnProgress: func(Progress) {}})
		if CategoryOf(err) != Deadlock {
			t.Fatalf("err = %v, want Deadlock", err)
		}
		// The threshold counted from the last progress (about 100ms after the send).
		if el := time.Since(start); el < 600*time.Millisecond {
			t.Errorf("deadlock declared after %v, before the last progress plus threshold and grace", el)
		}
	})
}

func TestBatchResponseRouted(t *testing.T) {
	var first msg
	_, d := newFake(t, func(f *fake, m msg) {
		if m.Method != "tools/call" {
			f.defaults(m)
			return
		}
		if first.ID == nil {
			first = m
			return
		}
		f.send(`[{"jsonrpc":"2.0","id":` + string(first.ID) + `,"result":{"content":[]}},{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"content":[]}}]`)
	})
	s := open(t, d, nil)
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := s.CallTool(context.Background(), "x", nil, nil)
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
