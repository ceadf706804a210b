package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpspec/mcpspec/internal/hint"
	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// Error is a failure as the user sees it: what failed, the next step, and the exit code.
type Error struct {
	// Code is the exit code; ExitOK means "decide from Err" (see [exitCodeOf]).
	Code ExitCode
	// Category is the fault category when a server interaction failed.
	Category session.Category
	// Msg says what failed, in one sentence.
	Msg string
	// Hint is the next step.
	Hint string
	// Err is the cause.
	Err error
	// Quiet means the failure was already shown (by a delegated command); print nothing more.
	Quiet bool
}

// Error returns Msg, or the cause's message when Msg is empty.
func (e *Error) Error() string {
	if e.Msg == "" && e.Err != nil {
		return e.Err.Error()
	}
	return e.Msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// report prints err to w as "Error: …" and "Hint: …" lines and, with jsonErrors, one more line of
// JSON: {"error", "category", "exitCode", "hint"}.
func report(w io.Writer, err error, code ExitCode, jsonErrors bool) {
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Msg: err.Error(), Category: session.CategoryOf(err)}
	}
	if !e.Quiet {
		// A message or hint may quote the server (its error text, its tools' names, its
		// stderr): no terminal escape of it reaches the terminal.
		fmt.Fprintf(w, "Error: %s\n", textfmt.Clean(e.Error()))
		if e.Hint != "" {
			fmt.Fprintf(w, "Hint: %s\n", strings.ReplaceAll(textfmt.Clean(e.Hint), "\n", "\n      "))
		}
	}
	if jsonErrors {
		var category any // null when the failure has no fault category
		if e.Category != "" {
			category = e.Category
		}
		// One line, with <, > and & as they are (the default escaping serves HTML, not logs).
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(struct {
			Error    string   `json:"error"`
			Category any      `json:"category"`
			ExitCode ExitCode `json:"exitCode"`
			Hint     string   `json:"hint,omitempty"`
		}{e.Error(), category, code, e.Hint})
	}
}

// specError turns a SPEC problem into a config error.
func specError(err error) error {
	var se *spec.Error
	if errors.As(err, &se) {
		hint := se.Hint
		if errors.Is(err, spec.ErrUnavailable) {
			return &Error{Code: ExitRuntime, Msg: se.Error(), Hint: "this build of mcpspec lacks that transport", Err: err}
		}
		return &Error{Code: ExitConfig, Msg: se.Error(), Hint: hint, Err: err}
	}
	return &Error{Code: ExitConfig, Msg: err.Error(), Err: err}
}

// connectError describes a failure to start, reach or initialize the server. Whatever its
// category it is a connection error, except an interruption.
func (t *target) connectError(ctx context.Context, err error) error {
	e := fromServerconn(err)
	if e.Code != ExitInterrupted && ctx.Err() == nil {
		e.Code = ExitConnection
	}
	return e
}

// requestError describes a failed request made after the handshake.
func (t *target) requestError(err error, what string) *Error {
	var ce *Error
	if errors.As(err, &ce) {
		return ce
	}
	return fromServerconn(t.conn.Describe(err, what, t.flags.Timeout))
}

// fromServerconn turns a described server failure into the CLI's error, with its exit code.
func fromServerconn(err error) *Error {
	e := &Error{Err: err, Msg: err.Error(), Hint: hint.Of(err), Category: session.CategoryOf(err)}
	var se *serverconn.Error
	if errors.As(err, &se) {
		e.Category = se.Category
	}
	e.Code = exitCodeForCategory(e.Category)
	switch {
	case e.Category == session.Cancelled:
		e.Code = ExitInterrupted
	case se != nil && se.Category == "":
		e.Code = ExitConfig
	}
	return e
}
