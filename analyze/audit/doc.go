// Package audit is mcpspec's security audit of an MCP server: offline, explainable, and quiet
// on benign servers.
//
// A passive audit reads only what a server lists about itself — tools, prompts, resources,
// resource templates and instructions, collected by [Collect] or read from a file by
// [ReadMetadata] — and never calls a tool. [PassiveAudit] runs the rules of [Catalog] over one
// server; [Run] audits several servers together (for the cross-server rules), compares each
// with the committed lockfile ([Drift], .mcpspec/tools.lock), applies the committed
// suppressions ([Suppress]) and locates every finding in the lockfile ([Locate]) so that SARIF
// consumers such as GitHub code scanning can show it. The score package weighs the findings
// for its security category: [Finding] carries a [Severity] and a [Confidence].
//
// Every [Finding] says which rule fired, how bad and how sure, the evidence span (invisible
// characters made visible, hidden text decoded), the signals that fired and the fix. Rules are
// built to avoid the false alarms of other scanners: directive injection needs two different
// kinds of signal close together, never one keyword; excessive agency reads annotations first
// (a delete tool already annotated destructive is fine, a parameterless tool is fine, a query
// parameter is not code execution); a toxic flow needs an untrusted source, a private-data read
// and an external sink, and names the three tools.
//
// An active audit ([Active]) is opt-in and fenced by [ActiveOptions]: an allow-list of tools,
// read-only tools only unless writes are allowed, capped calls, and a [Sandbox] for spawned
// servers (temporary working directory and HOME, a canary file outside the working directory, a
// canary secret in the environment). Only proof counts: the canary's nonce in an output, a
// computed value the input did not contain, a crash.
//
// Reports render as console text ([WriteConsole]), JSON ([WriteJSON], schema/audit.v1.json),
// SARIF 2.1.0 ([WriteSARIF]) and, through [ToRun], any test reporter (JUnit, Markdown, HTML).
package audit
