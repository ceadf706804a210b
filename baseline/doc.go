// Package baseline stores runs and compares a current run with a stored one.
//
// The store lives in the project directory:
//
//	.mcpspec/baselines/NAME.json   one baseline per name (a git branch, sanitized: "feature/x" → "feature-x")
//	.mcpspec/runs/latest.json      the most recent run, so `mcpspec baseline save NAME` can promote it
//
// Files are results documents (schema/results.v1.json), written atomically.
//
// [Compare] reports what changed between a baseline and the current run and whether it is a
// regression ([Diff.Regressed]):
//
//   - regressions: a test that passed and now fails or errors; a test whose p95 latency grew beyond
//     both a relative and an absolute tolerance (20% and 5ms by default); a tool the server no
//     longer lists; a tool schema changed incompatibly (a required input property added, a property
//     removed, a type changed, an enum narrowed, an output property removed …);
//   - not regressions: a test failing on the baseline that now passes (the baseline is stale,
//     reported as fixed), tests added or removed, other status changes, compatible schema changes
//     (an optional property added, a description changed), tests that got faster.
//
// Tool schemas are compared after resolving local $ref (recursion included, bounded), with anyOf
// and oneOf matched branch by branch and allOf over plain objects merged; a change the
// classifier cannot decide soundly is reported for review ([SchemaChange.Review]), never as
// breaking.
//
// A Diff renders as text ([Diff.WriteText]), markdown ([Diff.WriteMarkdown]) and JSON
// ([Diff.WriteJSON]). The CLI maps Regressed() to exit code 1.
package baseline
