package transport

import "testing"

func TestExitErrorCrashed(t *testing.T) {
	for _, c := range []struct {
		name string
		err  ExitError
		want bool
	}{
		{"clean exit", ExitError{Code: 0}, false},
		{"log.Fatal on a refused line", ExitError{Code: 1, StderrTail: "2026/01/02 03:04:05 linestream: token too long\n"}, false},
		{"Python traceback", ExitError{Code: 1, StderrTail: "Traceback (most recent call last):\n  File \"s.py\", line 3\nTypeError: x\n"}, true},
		{"Go panic", ExitError{Code: 2, StderrTail: "panic: interface conversion\n\ngoroutine 7 [running]:\n"}, true},
		{"status 2", ExitError{Code: 2}, true},
		{"signal", ExitError{Code: -1, Signal: "killed"}, true},
	} {
		if got := c.err.Crashed(); got != c.want {
			t.Errorf("%s: Crashed() = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestExitErrorOrderly(t *testing.T) {
	for _, c := range []struct {
		name string
		err  ExitError
		want bool
	}{
		{"clean exit", ExitError{Code: 0}, true},
		{"clean exit with a log line", ExitError{Code: 0, StderrTail: "shutting down\n"}, true},
		{"exit 0 after a panic report", ExitError{Code: 0, StderrTail: "panic: boom\n"}, false},
		{"status 1", ExitError{Code: 1}, false},
		{"signal", ExitError{Code: -1, Signal: "killed"}, false},
	} {
		if got := c.err.Orderly(); got != c.want {
			t.Errorf("%s: Orderly() = %v, want %v", c.name, got, c.want)
		}
	}
}
