package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	"golang.org/x/term"

	"github.com/mcpspec/mcpspec/assert"
	"github.com/mcpspec/mcpspec/runner"
)

// This file is `mcpspec test --step`: a prompt on the terminal before each test.

// stepHelp is the prompt's one-line help.
const stepHelp = "Enter runs it · s skips it · p [NAME] prints the variables · set NAME VALUE · q aborts"

// isTTY reports whether f is an *os.File on a terminal (of any TERM).
func isTTY(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}

// checkStep refuses --step when stdin or stderr is not a terminal (unless hooked, as the UI
// does): there is no one to answer.
func (a *app) checkStep(cfg *testConfig, hooked bool) error {
	if !hooked && (!isTTY(a.term.Stdin) || !isTTY(a.term.Stderr)) {
		return &Error{Code: ExitConfig, Msg: "--step needs a terminal: stdin and stderr must be a TTY",
			Hint: "run it in an interactive shell; in CI or a pipe leave --step out (--grep or --tag select tests instead)"}
	}
	if cfg.watch || cfg.dryRun {
		return &Error{Code: ExitConfig, Msg: "--step does not go with --watch or --dry-run", Hint: "step through one run: mcpspec test --step FILE"}
	}
	return nil
}

// stepper is the prompt between tests: it reads the answers from in, a line at a time, and
// writes to out (the masking stderr: a variable's secret value prints masked).
type stepper struct {
	a   *app
	out io.Writer
	in  io.Reader
	// once starts the reader; lines carries what it read, closed at the end of in.
	once  sync.Once
	lines chan string
	// aborted is set when the user aborted the run (read after the run).
	mu      sync.Mutex // guards aborted
	aborted bool
}

func (a *app) newStepper() *stepper {
	return &stepper{a: a, out: a.io.Stderr, in: a.io.Stdin, lines: make(chan string)}
}

// read feeds lines until in ends. A read from a terminal cannot be cancelled: this goroutine
// ends with the input (Ctrl-D) or with the process; nothing waits for it.
func (s *stepper) read() {
	defer close(s.lines)
	sc := bufio.NewScanner(s.in)
	for sc.Scan() {
		s.lines <- sc.Text()
	}
}

// wasAborted reports whether the user aborted the run at the prompt.
func (s *stepper) wasAborted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.aborted
}

// step is the runner's Step hook: it shows the next test and waits for an answer, or asks
// IO.Step when it is set.
func (s *stepper) step(ctx context.Context, next runner.StepInfo) runner.StepAction {
	if s.a.io.Step != nil {
		if a := s.a.io.Step(ctx, next, s.a.masker.Mask); a != runner.StepAbort {
			return a
		}
		return s.abort()
	}
	s.once.Do(func() { go s.read() })
	name := next.Test.Name
	if name == "" {
		name = next.Test.ID
	}
	fmt.Fprintf(s.out, "\n▸ next: %s › %s (%d of %d)\n  %s\n", next.Collection, name, next.Index+1, next.Total, stepHelp)
	for {
		fmt.Fprint(s.out, "step> ")
		s.a.flush()
		var line string
		var ok bool
		select {
		case <-ctx.Done():
			return runner.StepAbort
		case line, ok = <-s.lines:
		}
		if !ok {
			fmt.Fprintln(s.out, "\nend of input: aborting the run")
			return s.abort()
		}
		fields := strings.Fields(line)
		cmd := ""
		if len(fields) > 0 {
			cmd = strings.ToLower(fields[0])
		}
		switch cmd {
		case "", "c", "continue", "run":
			return runner.StepContinue
		case "s", "skip":
			fmt.Fprintf(s.out, "skipping %s\n", name)
			return runner.StepSkip
		case "q", "quit", "abort":
			fmt.Fprintln(s.out, "aborting: the tests not run are skipped; the reports hold the tests that ran")
			return s.abort()
		case "p", "print":
			s.printVars(next, fields[1:])
		case "set":
			rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), fields[0]))
			k, v, _ := strings.Cut(rest, " ")
			if k == "" {
				fmt.Fprintln(s.out, "usage: set NAME VALUE")
				continue
			}
			next.Vars.Set(k, strings.TrimSpace(v))
			fmt.Fprintf(s.out, "%s = %s\n", k, strings.TrimSpace(v))
		default:
			fmt.Fprintf(s.out, "unknown answer %q: %s\n", fields[0], stepHelp)
		}
	}
}

func (s *stepper) abort() runner.StepAction {
	s.mu.Lock()
	s.aborted = true
	s.mu.Unlock()
	return runner.StepAbort
}

// printVars prints the named variables, or all of them in name order.
func (s *stepper) printVars(next runner.StepInfo, names []string) {
	if len(names) == 0 {
		vals := next.Vars.Values()
		for k := range vals {
			names = append(names, k)
		}
		slices.Sort(names)
		if len(names) == 0 {
			fmt.Fprintln(s.out, "no variables")
		}
	}
	for _, n := range names {
		v, ok := next.Vars.Lookup(n)
		if !ok {
			fmt.Fprintf(s.out, "%s is not defined\n", n)
			continue
		}
		fmt.Fprintf(s.out, "%s = %s\n", n, assert.ToString(v))
	}
}
