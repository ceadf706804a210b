package cli

import (
	"context"
	"errors"

	"github.com/mcpspec/mcpspec/session"
)

// ExitCode is the status mcpspec exits with. The values are part of the interface: scripts and
// CI systems branch on them, so they never change meaning.
type ExitCode int

// The exit codes, as the README lists them. Every error reaching the edge is mapped to exactly
// one of them by [exitCodeOf]; nothing else in the program picks an exit status.
const (
	// ExitOK: success.
	ExitOK ExitCode = 0
	// ExitFailure: a test failed, a threshold was violated, a bug was found, or the tool
	// answered with isError.
	ExitFailure ExitCode = 1
	// ExitRuntime: a runtime error — the server answered with a JSON-RPC error (ServerError,
	// ProtocolError) or sent something malformed, or mcpspec itself failed.
	ExitRuntime ExitCode = 2
	// ExitConfig: bad input — an unknown flag, a bad SPEC, --args that are not a JSON object, an
	// invalid collection.
	ExitConfig ExitCode = 3
	// ExitConnection: the server could not be started or reached, the handshake failed, or the
	// connection was lost (Crash, Disconnected).
	ExitConnection ExitCode = 4
	// ExitTimeout: a deadline passed (Timeout) or the hang detector fired (Hang, Deadlock).
	ExitTimeout ExitCode = 5
	// ExitSecurity: security findings at or above --fail-on.
	ExitSecurity ExitCode = 6
	// ExitValidation: a response failed validation (schema, conformance).
	ExitValidation ExitCode = 7
	// ExitNotTested: the run exercised nothing — every target was left out (annotated
	// destructive or open-world, skipped by name) or there was none — so it can say neither
	// pass nor fail.
	ExitNotTested ExitCode = 8
	// ExitInterrupted: interrupted by SIGINT or SIGTERM.
	ExitInterrupted ExitCode = 130
)

// exitCodeForCategory maps a fault category to an exit code. A failure while opening the
// session is a connection error whatever its category (see [connectError]).
func exitCodeForCategory(c session.Category) ExitCode {
	switch c {
	case session.Crash, session.Disconnected:
		return ExitConnection
	case session.Timeout, session.Hang, session.Deadlock:
		return ExitTimeout
	case session.Cancelled:
		return ExitInterrupted
	case session.ServerError, session.ProtocolError, session.Malformed:
		return ExitRuntime
	}
	return ExitRuntime
}

// exitCodeOf returns the exit code for err: the code attached by [withCode] or carried by an
// [*Error], else the code of a classified session failure, else ExitInterrupted when the root
// context was cancelled by a signal, else ExitRuntime.
func exitCodeOf(ctx context.Context, err error) ExitCode {
	if err == nil {
		return ExitOK
	}
	if ctx.Err() != nil {
		// A signal cancelled the run: whatever failed after that failed because of it.
		return ExitInterrupted
	}
	var ce *Error
	if errors.As(err, &ce) && ce.Code != ExitOK {
		return ce.Code
	}
	if c := session.CategoryOf(err); c != "" {
		return exitCodeForCategory(c)
	}
	if errors.Is(err, context.Canceled) {
		return ExitInterrupted
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return ExitTimeout
	}
	return ExitRuntime
}
