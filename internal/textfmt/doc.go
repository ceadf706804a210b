// Package textfmt holds the few formatting rules that every human-readable output of mcpspec
// shares (reporters, baseline diffs, the CLI), so that a duration or a count reads the same in
// all of them. It imports nothing of mcpspec: every layer, down to session/transport, may
// use it.
package textfmt
