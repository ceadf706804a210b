package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mcpspec/mcpspec/session/recording"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/linestream"
)

// Options tunes a proxy. A nil *Options records nothing.
type Options struct {
	// Recorder receives every frame both ways; nil records nothing.
	Recorder *recording.Writer
	// MaxFrame is the largest frame accepted from the client (0 = [transport.MaxFrameSize]).
	MaxFrame int
	// DrainWait is how long, once the client closed its side, the proxy keeps passing on what
	// a server it can half-close (a child process: its stdin is closed) still sends, before it
	// stops the server (0 = [DefaultDrainWait]).
	DrainWait time.Duration
	// OnFault, when set, is told of a frame that could not be passed on (a framing fault on
	// either side); the frame is recorded as text.
	OnFault func(dir recording.Direction, err error)
}

// DefaultDrainWait is the default [Options.DrainWait].
const DefaultDrainWait = 5 * time.Second

// halfCloser is a connection whose sending side can be closed alone (stdio: the child's
// stdin), so the last answers still arrive.
type halfCloser interface {
	CloseWrite(ctx context.Context) error
}

func (o *Options) drainWait() time.Duration {
	if o == nil || o.DrainWait <= 0 {
		return DefaultDrainWait
	}
	return o.DrainWait
}

func (o *Options) record(dir recording.Direction, frame []byte, meta *recording.HTTP) error {
	if o == nil || o.Recorder == nil {
		return nil
	}
	return o.Recorder.Write(dir, frame, meta)
}

func (o *Options) fault(dir recording.Direction, err error) {
	if o != nil && o.OnFault != nil {
		o.OnFault(dir, err)
	}
}

// ErrUpstreamEnded is returned by [Stdio] when the server ended the connection (it exited, or
// closed its output) before the client did.
var ErrUpstreamEnded = errors.New("proxy: the server ended the connection")

// errClientGone is serverToClient's error when the client's side can no longer be written.
var errClientGone = errors.New("proxy: the client closed its input")

// Stdio relays newline-delimited frames between a client (in: what it sends, out: where its
// answers go) and the server conn, recording each. It returns nil when in ends (the client
// closed its side: a child server's stdin is closed and what it still sends is passed on for
// up to [Options.DrainWait], then conn is closed, which stops it), an error wrapping
// [ErrUpstreamEnded] and the transport's error when the server ended first, or ctx's error.
// conn is closed in every case before Stdio returns.
//
// A read from in cannot be interrupted: when ctx ends while the client is silent, Stdio returns
// and leaves one goroutine blocked on in until in is closed (the process exits).
func Stdio(ctx context.Context, in io.Reader, out io.Writer, conn transport.Conn, o *Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	maxFrame := 0
	if o != nil {
		maxFrame = o.MaxFrame
	}
	clientDone := make(chan error, 1)
	go func() { clientDone <- clientToServer(ctx, linestream.NewReader(in, maxFrame), conn, o) }()

	var wg sync.WaitGroup
	serverDone := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		serverDone <- serverToClient(bufio.NewWriterSize(out, 64<<10), conn, o)
	}()
	var err error
	select {
	case err = <-clientDone:
		if hc, ok := conn.(halfCloser); ok && err == nil {
			// The client is done: let the server see end of input and pass on what it still
			// answers, until it ends or the drain wait is over.
			t := time.NewTimer(o.drainWait())
			dctx, dcancel := context.WithTimeout(ctx, o.drainWait())
			if hc.CloseWrite(dctx) == nil {
				select {
				case <-serverDone:
				case <-t.C:
				case <-ctx.Done():
				}
			}
			dcancel()
			t.Stop()
		}
	case err = <-serverDone:
		if errors.Is(err, errClientGone) {
			err = nil // the client closed its input: it is done
			break
		}
		if err == nil || errors.Is(err, transport.ErrClosed) {
			err = ErrUpstreamEnded
		} else {
			err = fmt.Errorf("%w: %w", ErrUpstreamEnded, err)
		}
	case <-ctx.Done():
		err = ctx.Err()
	}
	cerr := conn.Close()
	wg.Wait() // Recv returns ErrClosed after Close
	if err == nil && cerr != nil {
		err = fmt.Errorf("proxy: stop server: %w", cerr)
	}
	return err
}

// clientToServer forwards frames from the client until its stream ends (nil) or a send fails.
func clientToServer(ctx context.Context, r *linestream.Reader, conn transport.Conn, o *Options) error {
	for {
		f, err := r.ReadFrame()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("proxy: read from client: %w", err)
		}
		if f.Err != nil {
			_ = o.record(recording.ClientToServer, f.Data, nil)
			o.fault(recording.ClientToServer, f.Err)
			continue
		}
		_ = o.record(recording.ClientToServer, f.Data, nil) // a failed recording is reported by its Close
		if err := conn.Send(ctx, f.Data); err != nil {
			return fmt.Errorf("proxy: send to server: %w", err)
		}
	}
}

// serverToClient forwards frames from the server until Recv fails; it returns that error (nil
// for a plain end of stream).
func serverToClient(w *bufio.Writer, conn transport.Conn, o *Options) error {
	for {
		f, err := conn.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if f.StreamEnded() {
			continue
		}
		if f.Err != nil {
			_ = o.record(recording.ServerToClient, f.Data, nil)
			o.fault(recording.ServerToClient, f.Err)
			continue
		}
		_ = o.record(recording.ServerToClient, f.Data, nil)
		w.Write(f.Data)
		w.WriteByte('\n')
		if err := w.Flush(); err != nil {
			return errClientGone
		}
	}
}
