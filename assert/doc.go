// Package assert compiles assertion specifications into [Checker] values and checks them
// against the result of one MCP request.
//
// Assertions are compiled once, when a collection is loaded: a bad regular expression, an
// expression that does not return a boolean or an unparseable JSONPath is a load error, never a
// run-time surprise. [Builtins] returns the registry of every built-in assertion type:
//
//	schema    inline JSON Schema, or "output": the tool's advertised outputSchema vs structuredContent
//	equals    the value at path equals value (numbers compare numerically, objects deeply)
//	contains  string contains / array has element / object has key (no path: the response text)
//	exists    path resolves; notExists: it does not
//	matches   the string at path (no path: the response text) matches a regular expression
//	type      the value at path is a string|number|integer|boolean|array|object|null
//	length    the length of the string/array/object at path compared with eq|ne|gt|gte|lt|lte
//	latency   the request's wire latency is at most max (maxMs or a duration)
//	mimeType  some content item has the given MIME type ("image/*" matches any image)
//	isError   the tool result's isError flag is the given value (default true)
//	snapshot  the value at path (default $) equals a golden file, compared as canonical JSON
//	expr      an expr-lang boolean expression over response, vars, latency, isError and text
//
// Paths are RFC 9535 JSONPath (github.com/theory/jsonpath; paths only the older Goessner
// dialect parses go to github.com/PaesslerAG/jsonpath) over the decoded result document: for a
// tools/call "$" is the result object {content, structuredContent, isError}; for resources/read
// the read result {contents}; for prompts/get the get result {description, messages}; for a list
// step {items: [...]}; for a raw request the raw result. See [Subject].
//
// Expressions are sandboxed: expr has no I/O functions, and on top of that every expression is
// limited in size ([ExprLimits.MaxNodes]), in the memory the VM may allocate, in the number of loop
// iterations and wall-clock time (checked inside every closure), and in the size of every
// intermediate string or array. Builtins whose result can outgrow their input (split, repeat,
// toJSON, keys, sort, …), string concatenation and `matches` patterns estimate what they would
// build and are refused before they allocate, with an error naming the builtin and saying how to
// write the assertion instead. A runaway expression fails the assertion; it never hangs a run
// nor takes more memory than its limits allow, whatever the response.
package assert
