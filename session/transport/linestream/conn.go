package linestream

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpspec/mcpspec/session/transport"
)

// Options tunes a [Conn]; the zero value and nil mean defaults.
type Options struct {
	// MaxFrameSize is the largest frame accepted from the peer; 0 means
	// [transport.MaxFrameSize].
	MaxFrameSize int
}

// Conn is a [transport.Conn] over a byte stream framed by newlines: a [Reader] on r for Recv
// and a [Writer] on w for Send.
//
// Concurrency follows [transport.Conn]: Send from many goroutines, Recv from one, Close from
// any, any number of times.
type Conn struct {
	r      *Reader
	w      *Writer
	closer func() error

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

var _ transport.Conn = (*Conn)(nil)

// NewConn returns a Conn reading frames from r and writing them to w. closer, if not nil,
// is called once by Close to release the stream (close the socket or the pipes); it must
// unblock a Read on r and a Write on w in progress. opts may be nil.
func NewConn(r io.Reader, w io.Writer, closer func() error, opts *Options) *Conn {
	var max int
	if opts != nil {
		max = opts.MaxFrameSize
	}
	return &Conn{r: NewReader(r, max), w: NewWriter(w), closer: closer}
}

// Send writes frame as one line; see [Writer.WriteFrame].
func (c *Conn) Send(ctx context.Context, frame []byte) error {
	if c.closed.Load() {
		return transport.ErrClosed
	}
	err := c.w.WriteFrame(ctx, frame)
	if err != nil && c.closed.Load() {
		return transport.ErrClosed
	}
	return err
}

// Recv returns the next frame; see [Reader.ReadFrame]. After Close it returns
// [transport.ErrClosed]; when the peer ends the stream it returns io.EOF or the read error.
func (c *Conn) Recv() (transport.Frame, error) {
	if c.closed.Load() {
		return transport.Frame{}, transport.ErrClosed
	}
	f, err := c.r.ReadFrame()
	if c.closed.Load() {
		return transport.Frame{}, transport.ErrClosed
	}
	return f, err
}

// closeFlushWait bounds how long Close waits for queued frames to be written.
const closeFlushWait = time.Second

// Close writes what Send queued (waiting a second at most, in case the peer stopped reading),
// calls the closer and waits for the writer goroutine (a few seconds at most). It is
// idempotent: later calls return the first call's result.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		ctx, cancel := context.WithTimeout(context.Background(), closeFlushWait)
		c.w.Flush(ctx)
		cancel()
		// Release the stream first so a write blocked on the peer returns, then stop the writer.
		var errs []error
		if c.closer != nil {
			errs = append(errs, c.closer())
		}
		errs = append(errs, c.w.Close())
		c.closeErr = errors.Join(errs...)
	})
	return c.closeErr
}
