// Package score rates an MCP server from 0 to 100 with a deterministic, versioned rubric
// ([RubricVersion]). The rubric is a list of checks in five categories — security, metadata
// quality, token efficiency, protocol and errors, discoverability — each worth a fixed number
// of points (100 when every check applies). A check that does not apply to a server (output
// schemas before 2025-06-18, parameter descriptions for a tool without parameters, retrieval
// without a golden set, security without an audit) leaves the denominator: the score is the
// points earned over the points possible, times 100, rounded half up. Every point is
// accounted for in [Result.Checks], with the reason it was earned or lost.
//
// Security weighs the passive audit's findings ([Audit], package audit) by severity × confidence, and a confirmed (certain)
// critical finding caps the whole score at [CriticalCap]. Latency is measured and reported,
// never scored: it depends on the machine.
//
// The rubric reads what [Probe] measured on a live session (handshake, capabilities, paging
// with a bad cursor, an unknown tool, invalid arguments to a read-only tool) and offline
// inputs (the inventory, a token report, audit findings, a retrieval report).
package score
