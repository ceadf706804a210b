package cli

import (
	"bufio"
	"context"
	"io"
	"os"

	"golang.org/x/term"
)

// lineSource reads the REPL's input one line at a time without blocking cancellation: a reader
// goroutine reads only when asked, and next returns as soon as ctx is done.
//
// On a terminal it uses golang.org/x/term's line editor (cursor keys, history); the terminal is
// in raw mode only while a line is being read, so Ctrl-C during a command is SIGINT as usual.
// Otherwise it reads plain lines, so `echo .tools | mcpspec inspect …` works.
//
// The reader goroutine cannot be interrupted while blocked reading stdin (no portable way
// exists); it exits at the next line or end of input, or with the process.
type lineSource struct {
	ask   chan struct{}
	lines chan lineResult
	done  chan struct{}

	// Terminal mode only.
	fd      int
	term    *term.Terminal
	restore *term.State
}

type lineResult struct {
	line string
	err  error
}

type lineReader interface {
	ReadLine() (string, error)
}

// newLineSource starts reading from in; prompt is shown on a terminal only.
func newLineSource(in io.Reader, out io.Writer, prompt string) *lineSource {
	ls := &lineSource{ask: make(chan struct{}, 1), lines: make(chan lineResult), done: make(chan struct{}), fd: -1}
	var rd lineReader
	fin, inOK := in.(*os.File)
	fout, outOK := out.(*os.File)
	if inOK && outOK && term.IsTerminal(int(fin.Fd())) && term.IsTerminal(int(fout.Fd())) {
		ls.fd = int(fin.Fd())
		ls.term = term.NewTerminal(struct {
			io.Reader
			io.Writer
		}{fin, fout}, prompt)
		if w, h, err := term.GetSize(int(fout.Fd())); err == nil && w > 0 && h > 0 {
			_ = ls.term.SetSize(w, h)
		}
		rd = ls.term
	} else {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64<<10), maxArgsSize+1024)
		rd = scanReader{sc}
	}
	go ls.read(rd)
	return ls
}

func (ls *lineSource) interactive() bool { return ls.term != nil }

// setCompleter makes Tab call complete (a golang.org/x/term AutoCompleteCallback) on a
// terminal; call it before the first next.
func (ls *lineSource) setCompleter(complete func(line string, pos int, key rune) (string, int, bool)) {
	if ls.term != nil {
		ls.term.AutoCompleteCallback = complete
	}
}

func (ls *lineSource) read(rd lineReader) {
	for {
		select {
		case <-ls.ask:
		case <-ls.done:
			return
		}
		line, err := rd.ReadLine()
		select {
		case ls.lines <- lineResult{line, err}:
		case <-ls.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// next returns the next line, io.EOF at the end of input, or ctx's error.
func (ls *lineSource) next(ctx context.Context) (string, error) {
	if ls.term != nil {
		if st, err := term.MakeRaw(ls.fd); err == nil {
			ls.restore = st
		}
		defer ls.cooked()
	}
	ls.ask <- struct{}{}
	select {
	case r := <-ls.lines:
		return r.line, r.err
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
}

// cooked puts the terminal back in the mode it had.
func (ls *lineSource) cooked() {
	if ls.restore != nil {
		_ = term.Restore(ls.fd, ls.restore)
		ls.restore = nil
	}
}

// close stops the reader goroutine once it is not blocked reading.
func (ls *lineSource) close() {
	ls.cooked()
	close(ls.done)
}

type scanReader struct{ sc *bufio.Scanner }

func (s scanReader) ReadLine() (string, error) {
	if s.sc.Scan() {
		return s.sc.Text(), nil
	}
	if err := s.sc.Err(); err != nil {
		return "", err
	}
	return "", io.EOF
}
