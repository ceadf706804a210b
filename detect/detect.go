// Package detect is the home of mcpspec's bug detectors, one package each, built on the shared
// server-opening layer (session/serverconn) and reported through the result model:
//
//   - [github.com/mcpspec/mcpspec/detect/deadlock]: calls that hang only when several arrive
//     together (the lazy-initialization class), diagnosed against the same calls made alone;
//   - [github.com/mcpspec/mcpspec/detect/race]: identical concurrent calls whose answers differ
//     where calls made one at a time never do, and answers that carry another call's argument;
//   - [github.com/mcpspec/mcpspec/detect/headofline]: fast calls that wait for slow ones;
//   - [github.com/mcpspec/mcpspec/detect/fuzz]: malformed frames and mutated tool arguments,
//     judged by the JSON-RPC and MCP rules, each finding minimised and savable as a test;
//   - [github.com/mcpspec/mcpspec/detect/barrier]: releases N goroutines at one instant.
//
// The concurrency detectors (deadlock, race, head-of-line) keep one contract, written down
// here and checked at compile time in each: a Run of the shape [RunFunc] takes an opener and
// options and returns a [Report] that renders as text (WriteText), as JSON, and as test cases
// (Tests) for the reporters; Run returns an error only when it cannot be carried out. The
// fuzzer and the probe have shapes of their own (raw sessions; rows of checks). This package
// also holds what the detectors share about making calls: how one call ended as a detector
// sees it ([Outcome], [Class]: answered in time, slow, never, the server gone) and which tools
// a detector may call on its own ([Selection]).
package detect
