// Package recording is the file format of recorded MCP traffic: one JSON object per line
// (JSONL), a [Header] first, then one [Entry] per frame in the order it passed, with its time
// offset from the start, its direction and the frame itself as raw JSON.
//
// A [Writer] appends entries as they happen (a recording stopped by an interrupt keeps every
// frame up to it), masks secrets with the function it is given and bounds each frame; the file
// is created readable by its owner only. [Read] and [ReadFile] load a recording with a size
// cap and report a bad line as file:line.
//
// Recordings are made by `mcpspec proxy` and `mcpspec record start`, replayed by `mcpspec
// record replay` and served by `mcpspec mock`; see docs/record.md.
package recording
