package fuzz

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/mcpspec/mcpspec/detect/fuzz/mutate"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/transport"
)

// beforeInitRule is why a frame sent before initialize may be refused. MCP (Lifecycle): "The
// client SHOULD NOT send requests other than pings before the server has responded to the
// initialize request."
const beforeInitRule = "comes before initialize (MCP: only pings may)"

// runRaw sends a before-initialize case on a fresh connection with no handshake, then a ping,
// and closes the connection. The error is a failure to connect.
func (w *worker) runRaw(ctx context.Context, c mutate.Case, res *CaseResult) error {
	rd := w.op.(RawDialer)
	rc, err := rd.DialRaw(ctx)
	if err != nil {
		return err
	}
	mark := markStderr(rc.StderrPath, rc.Process)
	var (
		mu      sync.Mutex // guards got and recvErr
		got     []tapped
		recvErr error
	)
	done := make(chan struct{})
	wake := make(chan struct{}, 1)
	go func() {
		defer close(done)
		for {
			f, err := rc.Recv()
			if err == nil && f.StreamEnded() {
				continue // a transport's signal, not bytes the server sent
			}
			mu.Lock()
			if err != nil {
				recvErr = err
				mu.Unlock()
				return
			}
			if len(got) < maxTapped {
				got = append(got, tapped{data: f.Data, size: len(f.Data), fault: f.Err, at: f.At})
			}
			mu.Unlock()
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	}()
	ev := evidence{stderr: mark}
	for _, f := range c.Frames {
		sent := mutate.WithID(f, 1)
		res.Sent = append(res.Sent, sent)
		ct := mutate.Judge(sent)
		if ct.Method != "ping" {
			ct = mutate.Contract{Why: beforeInitRule}
		}
		ev.contracts = append(ev.contracts, ct)
		if ev.sendErr == nil {
			ev.sendErr = rc.Send(ctx, sent)
		}
	}
	live := []byte(`{"jsonrpc":"2.0","id":` + livenessID + `,"method":"ping"}`)
	if ev.sendErr == nil {
		ev.sendErr = rc.Send(ctx, live)
	}
	answered := false
	deadline := time.NewTimer(w.opts.Liveness)
	for !answered {
		mu.Lock()
		for _, f := range got {
			answered = answered || answers(f.data, []byte(livenessID))
		}
		mu.Unlock()
		if answered {
			break
		}
		select {
		case <-wake:
			continue
		case <-done:
		case <-deadline.C:
		case <-ctx.Done():
		}
		break
	}
	deadline.Stop()
	_ = rc.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	mu.Lock()
	ev.frames, err = got, recvErr
	mu.Unlock()
	if !answered && err != nil && !errors.Is(err, transport.ErrClosed) {
		// The connection ended before the ping was answered: why?
		ev.live = rawLost(err)
	}
	if ev.sendErr != nil && !errors.Is(ev.sendErr, transport.ErrClosed) {
		if ev.live == nil {
			ev.live = rawLost(ev.sendErr)
		}
		var st *transport.StatusError
		if errors.As(ev.sendErr, &st) {
			ev.live, ev.sendErr = nil, rawStatus(st)
		}
	} else {
		ev.sendErr = nil
	}
	judge(&ev, res)
	res.lost = false // the connection was the case's own
	if res.Outcome == Ignored && !answered {
		res.Detail = "no answer before initialize, not even to a ping"
	}
	return nil
}

// rawLost classifies the end of a raw connection as a session would: a process that exited is
// a Crash (judged further by its exit status), anything else a Disconnected.
func rawLost(err error) error {
	var exit *transport.ExitError
	if errors.As(err, &exit) {
		return &session.Error{Category: session.Crash, Method: "(raw)", Message: exit.Error(), Err: err}
	}
	return &session.Error{Category: session.Disconnected, Method: "(raw)", Message: err.Error(), Err: err}
}

// rawStatus is an HTTP error status answering a raw frame: the server refused it.
func rawStatus(st *transport.StatusError) error {
	return &session.Error{Category: session.ServerError, Method: "(raw)", Message: st.Error(), Err: st}
}
