// Package tokens measures what a server's tool definitions cost in a model's context window,
// offline, with OpenAI's BPE encodings (o200k_base, cl100k_base) from
// github.com/tiktoken-go/tokenizer, which embeds them and counts as the reference tiktoken does.
//
// Per tool it counts the full tools/list entry (compact JSON, as the server sent it) and the
// core a client must send to a model (name, description and inputSchema), split into name,
// description, schema and the JSON structure around them; extras are the rest of the entry
// (title, annotations, outputSchema, icons, _meta, …). A [Report] sorts tools heaviest first,
// sums them, gives each total's share of common context windows, and [Compare] says what
// changed against an earlier report.
//
// Counts were checked against the reference tiktoken on every tool entry of the official
// reference servers. One known difference remains: tiktoken-go splits a blank run holding a
// newline, blanks and another newline ("\n  \n", an indented blank line) in two where
// tiktoken keeps one piece, which can add a token to a decoded description; compact JSON
// escapes its newlines, so full, core and schema counts are unaffected.
//
// The counts are exact for OpenAI models that use the encoding; for other models (Claude,
// Gemini, Llama …) they are an approximation: those tokenizers differ, and hosts wrap tool
// definitions in their own framing.
package tokens
