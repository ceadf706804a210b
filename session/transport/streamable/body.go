package streamable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/mcpspec/mcpspec/internal/clock"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/sseparse"
)

// maxDrain bounds how much of an oversized body is read and discarded (to keep the connection
// reusable) before the transport gives up on the connection instead.
const maxDrain = 4 * transport.MaxFrameSize

// frame makes a Frame of received bytes, flagging bytes that are not UTF-8.
func frame(data []byte) transport.Frame {
	f := transport.Frame{Data: data, At: time.Now()}
	if !utf8.Valid(data) {
		f.Data = excerpt(data)
		f.Err = &transport.FrameError{Reason: "invalid-utf8", Size: len(data)}
	}
	return f
}

func excerpt(b []byte) []byte {
	return bytes.Clone(b[:min(len(b), transport.ExcerptSize)])
}

func frameError(reason string, data []byte, size int) transport.Frame {
	return transport.Frame{Data: excerpt(data), At: time.Now(),
		Err: &transport.FrameError{Reason: reason, Size: size}}
}

// readAnswer reads a JSON answer (or the body of a 202/204) in Send's goroutine, while ctx is
// still tied to the request through cancel. Reading is bounded by BodyTimeout, which needs a
// timer only when ctx's deadline does not come first (the session's always does).
func (c *Conn) readAnswer(ctx context.Context, cancel context.CancelFunc, resp *http.Response, replyTo []byte, f *inflight) error {
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > c.d.BodyTimeout {
		timer := time.AfterFunc(c.d.BodyTimeout, cancel)
		defer timer.Stop()
	}
	if resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent {
		// No message; a body, if any, is read only so the connection can be reused.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		return nil
	}
	// application/json, and anything else: the session judges what the bytes are.
	return c.readJSON(ctx, resp.Body, resp.ContentLength, replyTo, f)
}

// readJSON reads a JSON answer: one message, or a batch array delivered element by element.
// The read is bounded by MaxFrameSize, and by the caller through the request's context. An
// empty body is a truncated frame when it answers a request, and nothing (a 200 standing in
// for 202) otherwise. When the read fails because ctx ended or the Conn closed nothing is
// delivered and that is the error, as when CancelRequest (f) aborted it; a body cut otherwise
// (a reset, BodyTimeout) is delivered as a truncated frame.
func (c *Conn) readJSON(ctx context.Context, body io.ReadCloser, length int64, replyTo []byte, f *inflight) error {
	defer body.Close()
	data, err := readBody(body, length, c.d.MaxFrameSize)
	switch {
	case err != nil && c.ctx.Err() != nil:
		return transport.ErrClosed
	case err != nil && f.wasCancelled():
		return &cancelledError{err: context.Canceled}
	case err != nil && ctx.Err() != nil:
		return c.abandoned(ctx.Err())
	case len(data) > c.d.MaxFrameSize:
		n, _ := io.Copy(io.Discard, io.LimitReader(body, max(maxDrain, 4*int64(c.d.MaxFrameSize))))
		fr := frameError("too-long", data, len(data)+int(n))
		fr.Err.(*transport.FrameError).Limit = c.d.MaxFrameSize
		c.deliver(replying(fr, replyTo))
		return nil
	case err != nil:
		// The body was cut (reset, BodyTimeout): what arrived is a truncated message.
		c.deliver(replying(frameError("truncated", data, len(data)), replyTo))
		return nil
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		if replyTo != nil {
			c.deliver(replying(frameError("truncated", nil, 0), replyTo))
		}
		return nil
	}
	if trimmed[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(trimmed, &batch) == nil && len(batch) > 0 {
			for _, m := range batch {
				c.deliver(frame(m))
			}
			return nil
		}
	}
	answer := frame(data)
	if answer.Err != nil || trimmed[0] != '{' {
		// Not a JSON-RPC message (an HTML page, plain text): it still answers this request.
		answer = replying(answer, replyTo)
	}
	c.deliver(answer)
	return nil
}

// replying marks a malformed f as the answer to the request with id replyTo (nil: not a
// request's answer). The id is copied: the frame outlives the caller's.
func replying(f transport.Frame, replyTo []byte) transport.Frame {
	if replyTo != nil {
		f.ReplyTo = bytes.Clone(replyTo)
	}
	return f
}

// readBody reads at most max+1 bytes of a body, in one allocation when its length is known.
func readBody(body io.Reader, length int64, max int) ([]byte, error) {
	if length < 0 || length > int64(max) {
		return io.ReadAll(io.LimitReader(body, int64(max)+1))
	}
	data := make([]byte, length)
	n, err := io.ReadFull(body, data)
	if err == nil {
		// A body longer than announced is the HTTP layer's error; read nothing more.
		return data, nil
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = io.ErrUnexpectedEOF
	}
	return data[:n], err
}

// idleReader cancels its stream when no Read returned data for the idle timeout.
type idleReader struct {
	r     io.Reader
	timer *time.Timer
	idle  time.Duration
}

func (r *idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.timer.Reset(r.idle)
	}
	return n, err
}

// pump delivers the messages of one SSE stream until it ends. It reports how many messages it
// delivered and whether one of them answered the request with id reqID (nil: none is awaited),
// calling onAnswer (when set) at that answer. A stream CancelRequest closed (f), or cut after
// its answer, ends without a truncated frame.
func (c *Conn) pump(p *sseparse.Reader, reqID json.RawMessage, f *inflight, onAnswer func()) (delivered int, answered bool) {
	for {
		ev, err := p.Next()
		var tooLong *sseparse.TooLongError
		switch {
		case err == nil:
			if ev.Type != "message" {
				continue // unknown event types carry no MCP message
			}
			c.deliver(frame(ev.Data))
			delivered++
			if reqID != nil && !answered && answers(ev.Data, reqID) {
				answered = true
				if onAnswer != nil {
					onAnswer()
				}
			}
		case errors.As(err, &tooLong):
			c.deliver(transport.Frame{At: time.Now(), Err: &transport.FrameError{Reason: "too-long", Size: tooLong.Size, Limit: tooLong.Max}})
		case errors.Is(err, sseparse.ErrTruncated):
			if c.ctx.Err() == nil && !f.wasCancelled() && !answered {
				c.deliver(frameError("truncated", ev.Data, len(ev.Data)))
			}
			return delivered, answered
		default:
			return delivered, answered
		}
	}
}

// readStream reads an SSE answer to a POST. When it ends before the request's response and the
// server gave an event id, it resumes with GET + Last-Event-ID (protocol versions before
// 2026-07-28), at most MaxResumes times, waiting as the server's retry: asks.
func (c *Conn) readStream(ctx context.Context, cancel context.CancelFunc, body io.ReadCloser, env envelope, f *inflight) {
	idle := time.AfterFunc(c.d.StreamIdleTimeout, cancel)
	defer idle.Stop()
	var reqID json.RawMessage
	if env.isRequest() {
		reqID = env.ID
	}
	lastID, delay := "", DefaultRetryDelay
	for resumes := 0; ; resumes++ {
		ir := &idleReader{r: body, timer: idle, idle: c.d.StreamIdleTimeout}
		p := sseparse.NewReader(ir, c.d.MaxFrameSize)
		// Once answered, the stream is read only for AnswerLinger more (each read extends it):
		// enough to see a duplicate, without pinning a connection to a server that holds it.
		_, answered := c.pump(p, reqID, f, func() { ir.idle = c.d.AnswerLinger; idle.Reset(ir.idle) })
		body.Close()
		if id := p.LastEventID(); id != "" {
			lastID = id
		}
		if r, ok := p.Retry(); ok {
			delay = min(r, MaxRetryDelay)
		}
		if answered {
			reqID = nil
		}
		_, version := c.state()
		if reqID == nil || lastID == "" || resumes >= c.d.MaxResumes || !legacyVersion(version) || ctx.Err() != nil {
			c.lostAnswer(ctx, reqID, f)
			return
		}
		if clock.Sleep(ctx, delay) != nil {
			return
		}
		if body = c.openGET(ctx, lastID); body == nil {
			c.lostAnswer(ctx, reqID, f)
			return
		}
	}
}

// lostAnswer tells the session that the stream meant to carry the answer to request reqID
// ended without it, and cannot be resumed: the answer is lost, which is not a hang. Nothing is
// said when the request was answered (reqID nil), cancelled, or given up (ctx ended).
func (c *Conn) lostAnswer(ctx context.Context, reqID json.RawMessage, f *inflight) {
	if reqID == nil || ctx.Err() != nil || c.ctx.Err() != nil || f.wasCancelled() {
		return
	}
	c.deliver(transport.Frame{At: time.Now(), ReplyTo: reqID, Err: &transport.FrameError{Reason: transport.ReasonStreamEnded}})
}

// openGET opens an SSE stream with GET, resuming after lastID when set. It returns nil when the
// server offers no stream (405, another status, another content type) or the request failed.
func (c *Conn) openGET(ctx context.Context, lastID string) io.ReadCloser {
	req, _, err := c.newRequest(ctx, http.MethodGet, nil)
	if err != nil {
		return nil
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil
	}
	c.noteSession(resp.Header)
	mediaType := resp.Header.Get("Content-Type")
	if resp.StatusCode != http.StatusOK || !isEventStream(mediaType) {
		drain(resp.Body, c.d.BodyTimeout)
		return nil
	}
	return resp.Body
}

// startGETStream opens the optional server→client stream once per session.
func (c *Conn) startGETStream() {
	c.mu.Lock()
	if c.getStarted || c.closed {
		c.mu.Unlock()
		return
	}
	c.getStarted = true
	c.mu.Unlock()
	c.spawn(c.getStream)
}

// getStream keeps the GET stream open: it reopens it (with Last-Event-ID) when the server ends
// it, until the server refuses, the Conn closes, or MaxResumes reopenings in a row brought no
// message.
func (c *Conn) getStream() {
	lastID, delay := "", DefaultRetryDelay
	for empty := 0; empty <= max(c.d.MaxResumes, 0); {
		ctx, cancel := context.WithCancel(c.ctx)
		body := c.openGET(ctx, lastID)
		if body == nil {
			cancel()
			return
		}
		idle := time.AfterFunc(c.d.StreamIdleTimeout, cancel)
		p := sseparse.NewReader(&idleReader{r: body, timer: idle, idle: c.d.StreamIdleTimeout}, c.d.MaxFrameSize)
		n, _ := c.pump(p, nil, nil, nil)
		idle.Stop()
		body.Close()
		cancel()
		if id := p.LastEventID(); id != "" {
			lastID = id
		}
		if r, ok := p.Retry(); ok {
			delay = min(r, MaxRetryDelay)
		}
		if n > 0 {
			empty = 0
		} else {
			empty++
		}
		if clock.Sleep(c.ctx, delay) != nil {
			return
		}
	}
}
