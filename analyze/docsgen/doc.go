// Package docsgen writes reference documentation for an MCP server from its
// [inventory.Inventory]: the server's instructions; per tool its annotations as badges, a
// parameter table (type, required, default, enum, constraints), the output schema, an example
// call synthesised from the input schema, its token cost and flags (an audit's findings); then
// prompts, resources and resource templates. Output is Markdown or a self-contained HTML page
// (no script, no external asset).
//
// The output is deterministic — no timestamps, everything sorted by name, JSON with sorted
// keys — so committed docs can be checked for staleness ([Check]). Everything the server wrote
// is untrusted text: Markdown and HTML special characters are escaped, so a description
// cannot inject links, images, raw HTML or table breaks.
package docsgen
