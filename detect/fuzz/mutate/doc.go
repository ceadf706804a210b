// Package mutate generates the fuzzer's cases and judges frames against the JSON-RPC 2.0 and
// MCP rules.
//
// A [Generator] makes a reproducible sequence of [Case] values from a seed: frames in each
// [Family] (malformed JSON, truncated frames, invalid UTF-8, control characters, huge frames,
// deep nesting, wrong jsonrpc, unknown and numeric methods, bad params, odd and duplicate ids,
// batches, notifications with ids, requests before initialize) and tools/call arguments derived
// from each tool's inputSchema — a valid baseline (required properties, const, enum, default,
// examples, bounds, formats, local $refs) mutated one property at a time (wrong types, missing
// required, extra properties, boundaries, empty and huge strings, Unicode edge cases), whose
// validity is then decided by validating them, not assumed. Frames carry [IDToken] where the
// sender puts an id it reserved. Frame cases never name a tool, resource or prompt that exists.
//
// [Judge] says what a server may do with a frame: survive and answer it (a well-formed MCP
// message), or refuse it however it likes (anything else); see [Contract].
package mutate
