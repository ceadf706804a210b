// Package detect is the home of mcpspec's bug detectors, one package each, built on the shared
// server-opening layer (internal/serverconn) and reported through the result model:
//
//   - [github.com/mcpspec/mcpspec/detect/deadlock]: calls that hang only when several arrive
//     together (the lazy-initialization class), diagnosed against the same calls made alone;
//   - [github.com/mcpspec/mcpspec/detect/race]: identical concurrent calls whose answers differ
//     where calls made one at a time never do, and answers that carry another call's argument;
//   - [github.com/mcpspec/mcpspec/detect/headofline]: fast calls that wait for slow ones;
//   - [github.com/mcpspec/mcpspec/detect/barrier]: releases N goroutines at one instant.
//
// Each detector's Run takes an opener and options and returns a report that renders as text
// (WriteText), as JSON, and as test cases (Tests) for the reporters; it returns an error only
// when it cannot be carried out. This package names the types the detectors share.
package detect

import "github.com/mcpspec/mcpspec/detect/internal/calls"

// Selection says which tools a detector may call without being told to: tools annotated
// destructiveHint or openWorldHint are left out unless included, and named tools skipped.
type Selection = calls.Selection

// Skipped is a tool a detector left out, and why.
type Skipped = calls.Skipped

// UnknownToolError is a tool a detector was told to call that the server does not list.
type UnknownToolError = calls.UnknownToolError

// Outcome is one call as a detector records it; Class how it ended.
type (
	Outcome = calls.Outcome
	Class   = calls.Class
)
