// Package inventory collects what an MCP server offers — its identity, instructions,
// capabilities, tools, prompts, resources and resource templates — into one plain value that
// the offline analyses (tokens, docsgen, retrieval, score) read. It talks to a server only
// through [Collect]; an [Inventory] also round-trips through JSON, so a saved one (or the
// output of `mcpspec tools --json`, or a bare tools/list result) can be analysed without a
// server.
package inventory
