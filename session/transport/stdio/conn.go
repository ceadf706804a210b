package stdio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/linestream"
)

const (
	// reapWait bounds the wait for the kernel to reap a SIGKILLed child.
	reapWait = 5 * time.Second
	// drainWait bounds the wait for stderr to reach EOF once the child is gone (a grandchild
	// that escaped the tree may still hold it).
	drainWait = 500 * time.Millisecond
	// exitWait is how long Recv waits, once stdout ended, for the child to be reaped (see
	// ended).
	exitWait = 2 * time.Second
	// tailWait bounds how long Recv waits for the last stderr lines before building an
	// ExitError.
	tailWait = 200 * time.Millisecond
)

// Shutdown stages reported by [Conn.ShutdownStage].
const (
	// StageExited: the child had already exited when Close began.
	StageExited = "exited"
	// StageStdin: the child exited after its stdin was closed.
	StageStdin = "stdin"
	// StageTerm: the child needed SIGTERM.
	StageTerm = "sigterm"
	// StageKill: the child needed SIGKILL (or, on Windows, terminating its job).
	StageKill = "sigkill"
)

// Conn is a connection to a server running as a child process. It implements
// [transport.Conn] and [transport.Process].
//
// Concurrency follows [transport.Conn]: Send from many goroutines, Recv from one, Close from
// any, any number of times. The Process methods are safe at any time.
type Conn struct {
	name             string
	cmd              *exec.Cmd
	tree             *tree
	grace, termGrace time.Duration
	abort            <-chan struct{} // closed to cut Close short; nil never

	stdin, stdout, stderr *os.File // our ends of the pipes
	r                     *linestream.Reader
	w                     *linestream.Writer

	tail       tailBuffer
	stderrPath string
	stderrLog  *stderrLog
	stderrCopy io.Writer // also receives stderr (Command.Stderr); set to nil by drainStderr after a write error
	// stderrErr is the first error writing the stderr file; set by drainStderr before drained.
	stderrErr error

	exited  chan struct{} // closed once the child was reaped; state is set before
	state   *os.ProcessState
	drained chan struct{} // closed when drainStderr returns
	// stdoutDrained is closed when the stdout drain started by Close returns.
	stdoutDrained chan struct{}
	watched       chan struct{} // closed when watch returns

	stdoutEnded     atomic.Bool // Recv reached the end of stdout
	closeStdoutOnce sync.Once

	closing   chan struct{} // closed when Close begins
	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
	stage     atomic.Value // string: how Close ended the child

	// recvErr is the terminal error every later Recv returns; used by the Recv goroutine only.
	recvErr error
}

var (
	_ transport.Conn    = (*Conn)(nil)
	_ transport.Process = (*Conn)(nil)
)

// PID returns the child's process id.
func (c *Conn) PID() int { return c.cmd.Process.Pid }

// StderrTail returns the last lines the child wrote to stderr (about 4 KiB at most).
func (c *Conn) StderrTail() string { return c.tail.String() }

// StderrPath returns the file holding the child's stderr (bounded: see [Command.StderrPath]),
// or "".
func (c *Conn) StderrPath() string { return c.stderrPath }

// ShutdownStage reports how Close ended the child: [StageExited], [StageStdin], [StageTerm]
// or [StageKill]; "" before Close has finished.
func (c *Conn) ShutdownStage() string {
	s, _ := c.stage.Load().(string)
	return s
}

// Send queues frame as one line on the child's stdin; see [linestream.Writer.WriteFrame].
// It returns [transport.ErrClosed] after Close.
func (c *Conn) Send(ctx context.Context, frame []byte) error {
	if c.closed.Load() {
		return transport.ErrClosed
	}
	if err := c.w.WriteFrame(ctx, frame); err != nil {
		if c.closed.Load() {
			return transport.ErrClosed
		}
		return fmt.Errorf("stdio: send to %s: %w", c.name, err)
	}
	return nil
}

// CloseWrite ends the conversation politely without ending the connection: it flushes the
// frames queued for the child (within ctx) and closes the child's stdin, so the child reads
// end of input and may still answer and exit on its own; Recv goes on until its stdout ends.
// Close is still needed afterwards (it then skips closing stdin). A proxy whose client closed
// its side uses it to pass the last answers on.
func (c *Conn) CloseWrite(ctx context.Context) error {
	if c.closed.Load() {
		return transport.ErrClosed
	}
	err := c.w.Flush(ctx)
	if cerr := c.stdin.Close(); err == nil && cerr != nil && !errors.Is(cerr, os.ErrClosed) {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("stdio: close the input of %s: %w", c.name, err)
	}
	return nil
}

// Recv returns the next line from the child's stdout. When stdout ends because the child
// exited, it returns a *[transport.ExitError]; if stdout ends while the child keeps running, an
// error wrapping io.EOF. After Close it returns [transport.ErrClosed]. Terminal errors are
// sticky.
func (c *Conn) Recv() (transport.Frame, error) {
	if c.closed.Load() {
		return transport.Frame{}, transport.ErrClosed
	}
	if c.recvErr != nil {
		return transport.Frame{}, c.recvErr
	}
	f, err := c.r.ReadFrame()
	if c.closed.Load() {
		return transport.Frame{}, transport.ErrClosed
	}
	if err == nil {
		return f, nil
	}
	c.stdoutEnded.Store(true)
	c.recvErr = c.ended(err)
	if c.closed.Load() {
		return transport.Frame{}, transport.ErrClosed
	}
	return transport.Frame{}, c.recvErr
}

// ended turns the end of stdout into the connection's terminal error. A child that closed its
// stdout is given exitWait (or Grace, if longer) to be reaped before it counts as still
// running: its exit is the likelier news, and reaping may lag on a loaded machine.
func (c *Conn) ended(readErr error) error {
	t := time.NewTimer(max(c.grace, exitWait))
	defer t.Stop()
	select {
	case <-c.exited:
	case <-c.closing:
		return transport.ErrClosed
	case <-t.C:
		if errors.Is(readErr, os.ErrClosed) {
			readErr = io.EOF
		}
		return fmt.Errorf("stdio: server %s closed its stdout but is still running: %w", c.name, readErr)
	}
	// Give the drainer a moment to catch the last stderr lines.
	t.Reset(tailWait)
	select {
	case <-c.drained:
	case <-c.closing:
	case <-t.C:
	}
	code, sig := exitStatus(c.state)
	return &transport.ExitError{Code: code, Signal: sig, StderrTail: c.tail.String(), StderrPath: c.stderrPath}
}

// watch reaps the child. If the child exited but stdout stays open (a grandchild holds it),
// it closes our end after Grace so that Recv reports the exit instead of blocking.
func (c *Conn) watch() {
	defer close(c.watched)
	c.cmd.Wait()
	c.state = c.cmd.ProcessState
	close(c.exited)
	t := time.NewTimer(c.grace)
	defer t.Stop()
	select {
	case <-c.closing:
	case <-t.C:
		if !c.stdoutEnded.Load() {
			c.closeStdout()
		}
	}
}

func (c *Conn) closeStdout() {
	c.closeStdoutOnce.Do(func() { c.stdout.Close() })
}

// drainStderr copies the child's stderr into the tail buffer and the stderr file until EOF.
func (c *Conn) drainStderr() {
	defer close(c.drained)
	buf := make([]byte, 32<<10)
	for {
		n, err := c.stderr.Read(buf)
		if n > 0 {
			c.tail.Write(buf[:n])
			if c.stderrCopy != nil {
				if _, werr := c.stderrCopy.Write(buf[:n]); werr != nil {
					c.stderrCopy = nil
				}
			}
			if c.stderrLog != nil && c.stderrErr == nil {
				if _, werr := c.stderrLog.Write(buf[:n]); werr != nil {
					c.stderrErr = fmt.Errorf("stdio: save stderr of %s: %w", c.name, werr)
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// Close shuts the child down: it flushes queued frames and closes stdin, waits up to Grace,
// sends SIGTERM to the whole process tree, waits up to TermGrace, then sends SIGKILL to the
// tree; whatever the child started is killed too. It then waits for the child and the
// connection's goroutines (with deadlines). Close is idempotent and safe from any goroutine;
// a pending Recv returns [transport.ErrClosed]. The error reports what could not be cleaned
// up, not how the child ended (see [Conn.ShutdownStage]).
func (c *Conn) Close() error {
	c.closeOnce.Do(func() { c.closeErr = c.shutdown() })
	return c.closeErr
}

func (c *Conn) shutdown() error {
	c.closed.Store(true)
	close(c.closing)
	var errs []error
	deadline := time.Now().Add(c.grace)

	stage := StageStdin
	select {
	case <-c.exited:
		stage = StageExited
	default:
	}
	// Note who belongs to the tree while the child still links them to it.
	c.tree.remember()
	// From now on nobody needs stdout: keep it flowing so a child writing on its way out does
	// not block on a full pipe. The drain ends when closeStdout below closes it.
	go func() {
		defer close(c.stdoutDrained)
		io.Copy(io.Discard, c.stdout)
	}()
	// The polite request: flush what was queued (within Grace), then close stdin.
	fctx, cancel := context.WithDeadline(context.Background(), deadline)
	stop := func() {}
	if c.abort != nil {
		stop = stopOn(c.abort, cancel)
	}
	c.w.Flush(fctx)
	stop()
	cancel()
	c.stdin.Close()
	if err := c.w.Close(); err != nil {
		errs = append(errs, fmt.Errorf("stdio: close %s: %w", c.name, err))
	}
	if !c.waitExit(time.Until(deadline)) {
		stage = StageKill
		if canTerminate && !c.aborted() {
			stage = StageTerm
			if err := c.tree.terminate(); err != nil {
				errs = append(errs, fmt.Errorf("stdio: close %s: SIGTERM: %w", c.name, err))
			}
		}
		if !canTerminate || !c.waitExit(c.termGrace) {
			stage = StageKill
			if err := c.tree.kill(); err != nil {
				errs = append(errs, fmt.Errorf("stdio: close %s: kill: %w", c.name, err))
			}
			if !waitChan(c.exited, reapWait) { // not cut short by Abort: the kill is done
				errs = append(errs, fmt.Errorf("stdio: close %s: process %d still running after kill", c.name, c.PID()))
			}
		}
	}
	c.stage.Store(stage)
	// Leave nothing behind: kill what the child started and left in its tree.
	if err := c.tree.kill(); err != nil {
		errs = append(errs, fmt.Errorf("stdio: close %s: kill leftovers: %w", c.name, err))
	}
	c.tree.release()
	c.closeStdout() // unblocks a pending Recv and the drain
	waitChan(c.stdoutDrained, drainWait)

	drained := waitChan(c.drained, drainWait)
	if !drained {
		c.stderr.Close() // someone outside the tree holds stderr open: stop reading it
		drained = waitChan(c.drained, drainWait)
	}
	c.stderr.Close()
	if c.stderrLog != nil {
		if drained && c.stderrErr != nil {
			errs = append(errs, c.stderrErr)
		}
		if err := c.stderrLog.Close(); err != nil {
			errs = append(errs, fmt.Errorf("stdio: close %s: stderr file: %w", c.name, err))
		}
	}
	if !waitChan(c.watched, drainWait) {
		errs = append(errs, fmt.Errorf("stdio: close %s: process %d was not reaped", c.name, c.PID()))
	}
	return errors.Join(errs...)
}

// waitExit waits up to d for the child to exit and reports whether it did. It gives up at once
// when Abort is closed (a nil Abort never is).
func (c *Conn) waitExit(d time.Duration) bool {
	if waitChan(c.exited, 0) {
		return true
	}
	if d <= 0 || c.aborted() {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.exited:
		return true
	case <-c.abort:
		return waitChan(c.exited, 0)
	case <-t.C:
		return false
	}
}

// aborted reports whether Abort was closed.
func (c *Conn) aborted() bool {
	select {
	case <-c.abort:
		return true
	default:
		return false
	}
}

// stopOn calls fn once ch is closed, until the returned stop is called; it owns one goroutine,
// which stop ends and waits for.
func stopOn(ch <-chan struct{}, fn func()) (stop func()) {
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		select {
		case <-ch:
			fn()
		case <-done:
		}
	}()
	return func() {
		close(done)
		<-ended
	}
}

// waitChan waits up to d for ch to close and reports whether it did.
func waitChan(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	default:
	}
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}
