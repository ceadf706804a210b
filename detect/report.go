package detect

import (
	"context"
	"io"

	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

// Report is the contract of what a concurrency detector (deadlock, race, head-of-line)
// returns, so that the CLI and the runner handle each alike. Its JSON form (encoding/json)
// is the detector's `--json` document. Each detector package checks at compile time that its
// *Report is one.
type Report interface {
	// Found reports whether the run found a bug (exit 1 on the command line).
	Found() bool
	// WriteText writes the report for a terminal.
	WriteText(w io.Writer) error
	// Tests returns the report as test cases for the reporters: a bug found is a failed case
	// that carries the diagnosis and the evidence, a run stopped early an errored one.
	Tests() []*result.Test
}

// RunFunc is the shape of a concurrency detector's Run: it runs the detector with opts (nil
// means defaults) against the server op opens, and returns an error only when the run
// cannot be carried out (the server cannot be reached, tools/list fails, a named tool is not
// listed: [*UnknownToolError]); what it finds is in the report. Each detector package checks
// at compile time that its Run is one:
//
//	var _ detect.RunFunc[Options, *Report] = Run
type RunFunc[O any, R Report] func(ctx context.Context, op *serverconn.Opener, opts *O) (R, error)
