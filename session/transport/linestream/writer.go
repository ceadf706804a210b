package linestream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mcpspec/mcpspec/session/transport"
)

const (
	// maxQueued bounds the bytes waiting behind a write in progress. Past it, new frames
	// wait (within their context) for the write to finish, so a peer that stops reading
	// cannot make us buffer without bound. A single frame larger than this is still accepted
	// when the queue is empty. 256 KiB benchmarked best: larger batches make 1,000 senders
	// wait longer and wake together.
	maxQueued = 256 << 10
	// keepBuffer is the largest batch buffer kept for reuse after a write.
	keepBuffer = 1 << 20
	// closeWait bounds how long Close waits for a write in progress to return.
	closeWait = 5 * time.Second
)

// ErrWriterStuck is returned by [Writer.Close] when a write to the underlying writer did not
// return within a few seconds; close the underlying file or socket to unblock it.
var ErrWriterStuck = errors.New("linestream: write to peer did not return")

// Writer writes newline-delimited frames from many goroutines.
//
// WriteFrame appends its frame to a shared queue and returns; one goroutine owned by the
// Writer writes the queue out, one write call per batch: while a write is in progress, new
// frames gather into the next batch, so a burst of N frames costs about one system call, not
// N, and no lock is held during I/O. When the queue is full (a peer that stops reading),
// WriteFrame waits for room, within its context. [Writer.Flush] waits until queued frames are
// written.
//
// All methods are safe for concurrent use.
type Writer struct {
	w io.Writer

	mu sync.Mutex // guards the fields below
	// queued holds the frames of the next batch, each followed by "\n".
	queued []byte
	// next is the batch that queued belongs to.
	next *batch
	// inflight is the batch being written, nil when the writer goroutine is idle.
	inflight *batch
	// spare is a reusable buffer for the next batch.
	spare []byte
	// err is the first write error; every later frame fails with it.
	err    error
	closed bool

	kick   chan struct{} // wakes the writer goroutine; capacity 1
	quit   chan struct{} // closed by Close
	exited chan struct{} // closed when the writer goroutine returns
}

// batch is one write call's worth of frames; done is closed once err is set.
type batch struct {
	done chan struct{}
	err  error
}

func newBatch() *batch { return &batch{done: make(chan struct{})} }

// NewWriter returns a Writer over w and starts its writer goroutine; Close stops it.
func NewWriter(w io.Writer) *Writer {
	lw := &Writer{
		w:      w,
		next:   newBatch(),
		kick:   make(chan struct{}, 1),
		quit:   make(chan struct{}),
		exited: make(chan struct{}),
	}
	go lw.loop()
	return lw
}

// WriteFrame queues frame followed by "\n" for writing and returns; the frame is written
// shortly after by the Writer's goroutine. The bytes go out as given: a frame holding a newline
// goes out as more than one line, which is what a test sending a malformed frame wants.
//
// It returns ctx.Err() if ctx ends while waiting for room in a full queue,
// [transport.ErrClosed] after Close, or the write error that broke the stream: the error is
// sticky, since a stream cut mid-frame cannot carry more frames. A frame queued just before a
// write fails may be lost without its own error; the next WriteFrame or Flush reports it.
func (w *Writer) WriteFrame(ctx context.Context, frame []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w.mu.Lock()
	for {
		if w.closed {
			w.mu.Unlock()
			return transport.ErrClosed
		}
		if w.err != nil {
			err := w.err
			w.mu.Unlock()
			return err
		}
		if len(w.queued) == 0 || len(w.queued)+len(frame) < maxQueued {
			break
		}
		// The queue is full: wait for the write in progress, after which the writer
		// goroutine takes the queue, or for the queue itself if none is in progress.
		wait := w.next.done
		if w.inflight != nil {
			wait = w.inflight.done
		}
		w.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
		w.mu.Lock()
	}
	w.queued = append(w.queued, frame...)
	w.queued = append(w.queued, '\n')
	w.mu.Unlock()

	select {
	case w.kick <- struct{}{}:
	default: // the writer goroutine is already due to look at the queue
	}
	return nil
}

// Flush waits until every frame queued before the call has been written, or ctx ends. It
// returns the write error that broke the stream, if any.
func (w *Writer) Flush(ctx context.Context) error {
	w.mu.Lock()
	var b *batch
	switch {
	case len(w.queued) > 0:
		b = w.next
	case w.inflight != nil:
		b = w.inflight
	}
	err := w.err
	w.mu.Unlock()
	if b == nil {
		return err
	}
	select {
	case w.kick <- struct{}{}:
	default:
	}
	select {
	case <-b.done:
		return b.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// loop is the writer goroutine: it writes queued batches until Close.
func (w *Writer) loop() {
	defer close(w.exited)
	for {
		select {
		case <-w.kick:
		case <-w.quit:
			w.fail(transport.ErrClosed)
			return
		}
		for w.flushOne() {
		}
	}
}

// flushOne writes the queued batch, if any, and reports whether it wrote one.
func (w *Writer) flushOne() bool {
	w.mu.Lock()
	if len(w.queued) == 0 || w.closed {
		w.mu.Unlock()
		return false
	}
	data, b := w.queued, w.next
	w.queued, w.next, w.spare = w.spare[:0], newBatch(), nil
	w.inflight = b
	w.mu.Unlock()

	_, err := w.w.Write(data)

	w.mu.Lock()
	if err != nil {
		err = fmt.Errorf("linestream: write: %w", err)
		if w.err == nil {
			w.err = err
		}
	}
	if cap(data) <= keepBuffer {
		w.spare = data[:0]
	}
	w.inflight = nil
	w.mu.Unlock()
	b.err = err
	close(b.done)
	if err != nil {
		w.fail(err)
		return false
	}
	return true
}

// fail ends the queued batch with err.
func (w *Writer) fail(err error) {
	w.mu.Lock()
	b := w.next
	w.queued, w.next = nil, newBatch()
	w.mu.Unlock()
	b.err = err
	close(b.done)
}

// Close stops the Writer: frames not yet written fail with [transport.ErrClosed]. Close does
// not close the underlying writer; if a write to it is blocked (a peer that stopped reading),
// close the underlying file or socket first so the write returns. Close waits for the writer
// goroutine a few seconds at most and returns [ErrWriterStuck] if it is still blocked.
// Close is idempotent.
func (w *Writer) Close() error {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.quit)
	}
	w.mu.Unlock()
	t := time.NewTimer(closeWait)
	defer t.Stop()
	select {
	case <-w.exited:
		return nil
	case <-t.C:
		return ErrWriterStuck
	}
}
