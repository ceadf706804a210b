// Package gates runs a collection's analysis blocks — `tokens:` (a budget for the tool
// definitions), `score:` (a minimum MCP score) and `retrieval:` (a golden set against a
// baseline) — on an open session and turns each into one test result, so that `mcpspec test`
// can gate them beside the collection's tests. It does what the verbs tokens, score and
// retrieval do, without their printing.
package gates
