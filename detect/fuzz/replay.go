package fuzz

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/mcpspec/mcpspec/detect/fuzz/mutate"
	"github.com/mcpspec/mcpspec/session"
)

// FrameVerdict is how a server handled one raw frame sent on a session of its own (a
// collection's `frame:` step, which is how saved findings replay).
type FrameVerdict struct {
	Outcome Outcome
	Detail  string
	// Result is the answer's result when the frame was a request answered with one.
	Result json.RawMessage
	// Rejection is the JSON-RPC error that answered the frame, if any.
	Rejection *session.Error
	// Err is the failure behind a crash, a hang or a malformed answer.
	Err error
	// Lost says the session is gone (or unusable) and must not be reused.
	Lost bool
}

// Bug reports whether the verdict is a bug (accepted-invalid never is for a raw frame).
func (v *FrameVerdict) Bug() bool { return v.Outcome.Bug(false) }

// ReplayFrame sends frame byte for byte on s, waits up to timeout for its answer when it is a
// request with an integer id, then pings the server, and judges by the fuzzer's rules: a frame
// that is a well-formed MCP message must be survived (and answered, when a request); any other
// may be refused, even by ending the session, but must not crash the server; whatever the
// server sends must be well-formed JSON-RPC.
func ReplayFrame(ctx context.Context, s *session.Session, frame []byte, timeout time.Duration) *FrameVerdict {
	start := time.Now()
	ct := mutate.Judge(frame)
	ev := evidence{contracts: []mutate.Contract{ct}, sent: [][]byte{frame}}
	if ct.Request {
		if id, err := strconv.ParseInt(string(ct.ID), 10, 64); err == nil {
			ev.resp, ev.err = s.RequestRaw(ctx, id, frame, timeout)
			ev.awaited = !errors.Is(ev.err, session.ErrIDInUse)
			ev.slowOK = ct.Method == "tools/call"
		}
	}
	if !ev.awaited {
		ev.err = nil
		ev.sendErr = s.SendRaw(ctx, frame)
	}
	if !lost(ev.err) && !lost(ev.sendErr) {
		ev.live = pingSession(ctx, s, min(timeout, 10*time.Second))
	}
	// What the session could not route (a malformed frame, an answer to a raw id) is a finding.
	for _, f := range s.Findings() {
		if !f.At.Before(start) && f.Category == session.Malformed {
			ev.frames = append(ev.frames, tapped{data: f.Frame, size: len(f.Frame), fault: errors.New(f.Message)})
		}
	}
	res := &CaseResult{Sent: [][]byte{frame}}
	judge(&ev, res)
	v := &FrameVerdict{Outcome: res.Outcome, Detail: res.Detail, Lost: res.lost}
	var se *session.Error
	switch {
	case ev.resp != nil:
		v.Result = ev.resp.Result
	case errors.As(ev.err, &se) && se.Code != 0:
		v.Rejection = se
	}
	if v.Bug() {
		v.Err = firstErr(ev.err, ev.sendErr, ev.live)
		if v.Err == nil {
			v.Err = errors.New(res.Detail)
		}
	}
	return v
}

// pingSession checks that the server still answers on s; any well-formed answer is alive.
func pingSession(ctx context.Context, s *session.Session, timeout time.Duration) error {
	id := s.NextID()
	frame := []byte(`{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"method":"ping"}`)
	_, err := s.RequestRaw(ctx, id, frame, timeout)
	var se *session.Error
	if errors.As(err, &se) && (se.Code != 0 || se.Category == session.ServerError) {
		return nil
	}
	return err
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
