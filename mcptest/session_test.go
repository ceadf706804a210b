package mcptest_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpspec/mcpspec/internal/poll"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport/streamable"
)

// openSession opens mcpspec's own client on s over Streamable HTTP, in the legacy era.
func openSession(t *testing.T, s *mcptest.Server, opts session.Options) *session.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitFor)
	defer cancel()
	opts.ProtocolVersion = mcptest.LatestLegacyVersion
	opts.RequestTimeout = waitFor
	sess, err := session.Open(ctx, &streamable.Dialer{URL: s.URL}, &opts)
	if err != nil {
		t.Fatalf("open session: %v", err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	return sess
}

func firstText(t *testing.T, r *session.ToolResult) string {
	t.Helper()
	if len(r.Content) == 0 {
		t.Fatalf("tool result has no content: %s", r.Raw)
	}
	var c struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(r.Content[0], &c); err != nil {
		t.Fatalf("content %s: %v", r.Content[0], err)
	}
	return c.Text
}

// TestSessionResumesDroppedStream: with --drop-sse-after 1 every SSE answer is cut after one
// event, so the slow call only completes if the client resumes with Last-Event-ID.
func TestSessionResumesDroppedStream(t *testing.T) {
	s := mcptest.NewServer(&mcptest.Options{DropSSEAfter: 1})
	t.Cleanup(s.Close)
	sess := openSession(t, s, session.Options{})
	var progress atomic.Int64
	r, err := sess.CallTool(t.Context(), "slow", map[string]any{"milliseconds": 100},
		&session.CallOptions{OnProgress: func(session.Progress) { progress.Add(1) }})
	if err != nil {
		t.Fatalf("slow call: %v", err)
	}
	if got := firstText(t, r); got != "slept 100ms" || r.IsError {
		t.Errorf("slow result %s", r.Raw)
	}
	if st := s.Stats(); st.Resumes < 1 {
		t.Errorf("stats %+v: the stream was never resumed", st)
	}
	if p := progress.Load(); p != 10 {
		t.Errorf("%d progress notifications, want 10 (the one before the cut and the 9 replayed after)", p)
	}
}

func TestSessionAnswersServerRequests(t *testing.T) {
	s := mcptest.NewServer(nil)
	t.Cleanup(s.Close)
	roots := []session.Root{{URI: "file:///work", Name: "work"}, {URI: "file:///tmp"}}
	tests := []struct {
		name      string
		opts      session.Options
		tool      string
		args      map[string]any
		wantText  string
		wantError bool
	}{
		{"elicitation reply", session.Options{ElicitationReply: json.RawMessage(`{"action":"accept","content":{"answer":"42"}}`)},
			"ask", map[string]any{"message": "answer?"}, `"answer":"42"`, false},
		{"no elicitation reply", session.Options{},
			"ask", map[string]any{"message": "answer?"}, "did not declare the elicitation capability", true},
		{"sampling reply", session.Options{SamplingReply: json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}`)},
			"ask", map[string]any{"kind": "sampling"}, `"model":"m"`, false},
		{"roots", session.Options{Roots: roots}, "roots", nil, `"uri":"file:///work"`, false},
		{"no roots", session.Options{}, "roots", nil, "did not declare the roots capability", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sess := openSession(t, s, tt.opts)
			r, err := sess.CallTool(t.Context(), tt.tool, tt.args, nil)
			var se *session.Error
			if errors.As(err, &se) {
				t.Fatalf("%s: session error %v (category %v)", tt.tool, se, se.Category)
			}
			if err != nil {
				t.Fatalf("%s: %v", tt.tool, err)
			}
			if text := firstText(t, r); r.IsError != tt.wantError || !strings.Contains(text, tt.wantText) {
				t.Errorf("%s result %s, want isError=%v and text containing %q", tt.tool, r.Raw, tt.wantError, tt.wantText)
			}
			if tt.tool == "roots" && !tt.wantError {
				var got struct{ Roots []session.Root }
				if err := json.Unmarshal(r.StructuredContent, &got); err != nil || len(got.Roots) != 2 || got.Roots[1] != roots[1] {
					t.Errorf("roots %s, want %v", r.StructuredContent, roots)
				}
			}
		})
	}
}

// TestExtraAnswersOverStreamableHTTP: stray and duplicate answers reach a client over
// Streamable HTTP too (the answer becomes an event stream), in both eras; the session routes
// the real answer and reports each extra one as a finding.
func TestExtraAnswersOverStreamableHTTP(t *testing.T) {
	for _, era := range []string{mcptest.LatestLegacyVersion, mcptest.StatelessVersion} {
		for _, sse := range []bool{false, true} {
			s := mcptest.NewServer(&mcptest.Options{StrayAnswer: true, DuplicateAnswers: true, SSEResponses: sse})
			t.Cleanup(s.Close)
			var findings atomic.Int64
			ctx, cancel := context.WithTimeout(t.Context(), waitFor)
			sess, err := session.Open(ctx, &streamable.Dialer{URL: s.URL}, &session.Options{ProtocolVersion: era, RequestTimeout: waitFor,
				OnFinding: func(session.Finding) { findings.Add(1) }})
			cancel()
			if err != nil {
				t.Fatalf("%s: open: %v", era, err)
			}
			r, err := sess.CallTool(t.Context(), "echo", map[string]any{"text": "real"}, nil)
			if err != nil || firstText(t, r) != "real" {
				t.Fatalf("%s sse=%v: call = %v, %v", era, sse, r, err)
			}
			// The duplicate follows the answer on its stream: give the reader time to get to it.
			poll.Within(waitFor, func() bool { return findings.Load() >= 2 })
			_ = sess.Close()
			if n := findings.Load(); n != 2 {
				t.Errorf("%s sse=%v: %d findings, want 2 (the stray and the duplicate): %v", era, sse, n, sess.Findings())
			}
		}
	}
}
