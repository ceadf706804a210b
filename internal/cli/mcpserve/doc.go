// Package mcpserve is mcpspec as an MCP server for agents (`mcpspec mcp`): its verbs as tools
// with strict input and output schemas, behind a policy that decides which servers may be
// started and which files may be read.
//
// Each tool runs the verb itself, in process, through [Options.Run] with --json, so an agent
// gets exactly what `mcpspec VERB --json` prints, plus a short text. Every run is bounded: its
// arguments have caps (time, concurrency, rate, calls), and a hard deadline backs the verb's
// own. A `server` argument must be "testserver", a server named in a collection under the
// working directory, or a line of the allowlist file ([LoadPolicy]); paths must stay in the
// working directory, symbolic links resolved ([Policy.Path]). Over HTTP, [Guard] admits only
// loopback Host and Origin headers and a bearer token.
package mcpserve
