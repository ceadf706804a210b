package stdio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"time"

	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/linestream"
)

// Default shutdown waits, used when a [Command] leaves them zero.
const (
	// DefaultGrace is how long Close waits after closing stdin before SIGTERM.
	DefaultGrace = time.Second
	// DefaultTermGrace is how long Close waits after SIGTERM before SIGKILL. With DefaultGrace,
	// a server that ignores both is killed 1.5s after Close begins.
	DefaultTermGrace = 500 * time.Millisecond
)

// Command describes a server to run as a child process; it implements [transport.Dialer].
// The zero values of the optional fields mean defaults.
type Command struct {
	// Path is the program: a name looked up in PATH, or a path (relative to Dir if relative).
	Path string
	// Args are the arguments after the program name.
	Args []string
	// Env holds "KEY=value" entries added to (and overriding) the current environment.
	Env []string
	// OnlyEnv makes Env the child's whole environment: nothing of the current one is passed
	// (a sandboxed server must not see the caller's tokens).
	OnlyEnv bool
	// Dir is the working directory; "" means the current one.
	Dir string
	// StderrPath is a file to save the child's stderr in (created, or truncated, readable by its
	// owner only, along with missing parent directories); "" keeps only the last lines in
	// memory. The file stays bounded: its first [StderrHead] bytes, a line saying how much was
	// dropped, and the last [StderrTail] bytes or so.
	StderrPath string
	// Stderr, when set, also receives everything the child writes to stderr, as it arrives (a
	// proxy passes it through); a write error stops only the copying to Stderr.
	Stderr io.Writer
	// Grace is how long Close waits for the child to exit after closing its stdin
	// (default [DefaultGrace]).
	Grace time.Duration
	// TermGrace is how long Close waits after SIGTERM before SIGKILL
	// (default [DefaultTermGrace]).
	TermGrace time.Duration
	// MaxFrameSize is the largest line accepted from the child (default
	// [transport.MaxFrameSize]).
	MaxFrameSize int
	// Abort, when closed, cuts Close short: it kills the process tree at once instead of
	// waiting Grace and TermGrace (a second Ctrl-C). nil never aborts.
	Abort <-chan struct{}
}

var _ transport.Dialer = Command{}

// Dial starts the server; it returns a *[Conn]. See [Command.Start].
func (c Command) Dial(ctx context.Context) (transport.Conn, error) {
	conn, err := c.Start(ctx)
	if err != nil {
		return nil, err
	}
	return conn, nil
}

// Start spawns the server process with pipes on its stdin, stdout and stderr and returns the
// connection to it. ctx bounds the start only: the process lives until Close (or its own
// exit). A program that cannot be started gives an error naming it, with a hint.
func (c Command) Start(ctx context.Context) (*Conn, error) {
	if c.Path == "" {
		return nil, errors.New("stdio: start server: no command given")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("stdio: start server %q: %w", c.Path, err)
	}
	if c.Dir != "" {
		if st, err := os.Stat(c.Dir); err != nil {
			return nil, fmt.Errorf("stdio: start server %q: working directory: %w", c.Path, err)
		} else if !st.IsDir() {
			return nil, fmt.Errorf("stdio: start server %q: working directory %q is not a directory", c.Path, c.Dir)
		}
	}
	cmd := exec.Command(c.Path, c.Args...)
	cmd.Dir = c.Dir
	switch {
	case c.OnlyEnv:
		cmd.Env = append([]string{}, c.Env...)
	case len(c.Env) > 0:
		cmd.Env = append(os.Environ(), c.Env...)
	}
	mark := prepare(cmd)

	conn := &Conn{
		name:          c.Path,
		abort:         c.Abort,
		grace:         orDefault(c.Grace, DefaultGrace),
		termGrace:     orDefault(c.TermGrace, DefaultTermGrace),
		stderrPath:    c.StderrPath,
		stderrCopy:    c.Stderr,
		exited:        make(chan struct{}),
		drained:       make(chan struct{}),
		stdoutDrained: make(chan struct{}),
		watched:       make(chan struct{}),
		closing:       make(chan struct{}),
	}
	// The child's ends of the pipes, closed here once the child has them.
	var childEnds []*os.File
	fail := func(err error) (*Conn, error) {
		for _, f := range append(childEnds, conn.stdin, conn.stdout, conn.stderr) {
			if f != nil {
				f.Close()
			}
		}
		if conn.stderrLog != nil {
			conn.stderrLog.Close()
		}
		return nil, err
	}
	for i := range 3 {
		r, w, err := os.Pipe()
		if err != nil {
			return fail(fmt.Errorf("stdio: start server %q: pipe: %w", c.Path, err))
		}
		switch i {
		case 0: // stdin: the child reads, we write
			conn.stdin = w
			childEnds = append(childEnds, r)
		case 1:
			conn.stdout = r
			childEnds = append(childEnds, w)
		case 2:
			conn.stderr = r
			childEnds = append(childEnds, w)
		}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = childEnds[0], childEnds[1], childEnds[2]
	if c.StderrPath != "" {
		l, err := createStderrLog(c.StderrPath)
		if err != nil {
			return fail(fmt.Errorf("stdio: start server %q: stderr file: %w", c.Path, err))
		}
		conn.stderrLog = l
	}
	if err := cmd.Start(); err != nil {
		return fail(fmt.Errorf("stdio: start server %q: %w%s", c.Path, err, startHint(err)))
	}
	for _, f := range childEnds {
		f.Close()
	}
	childEnds = nil
	t, err := newTree(cmd.Process, mark, conn.exited)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return fail(fmt.Errorf("stdio: start server %q: %w", c.Path, err))
	}
	conn.cmd, conn.tree = cmd, t
	conn.r = linestream.NewReader(conn.stdout, c.MaxFrameSize)
	conn.w = linestream.NewWriter(conn.stdin)
	go conn.drainStderr()
	go conn.watch()
	return conn, nil
}

// startHint suggests what to check when a program could not be started.
func startHint(err error) string {
	switch {
	case errors.Is(err, exec.ErrDot):
		return " (name it with a path, such as ./server)"
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		return " (is it installed? check the command name and PATH)"
	case errors.Is(err, fs.ErrPermission):
		return " (check that the file is executable)"
	}
	return ""
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
