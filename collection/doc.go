// Package collection loads mcpspec collections: YAML files of tests for an MCP server.
//
// [Load], [Parse] and [LoadAll] (or a reusable [Loader]) read a file strictly and return a typed,
// validated [Collection], or an [ErrorList] holding every problem found, each at
// file:line:column with a hint where one helps:
//
//	examples/x.yaml:12:7: unknown key "asserts" in test "Get user" (did you mean "assertions"?)
//
// # Order of checks
//
//  1. size (LoadOptions.MaxFileSize, 1 MiB), YAML syntax, exactly one document;
//  2. the whole tree: no anchors/aliases/merge keys, no custom tags, bounded nesting;
//  3. decoding into the typed model: unknown keys, wrong types, bad durations, bad JSONPaths,
//     regular expressions and expressions (assertions are compiled here, with [assert.Builtins]),
//     free-form values nested deeper than LoadOptions.MaxDepth (10), more than MaxTests (1000);
//  4. if decoding found nothing, the JSON Schema schema/collection.v1.json (the same document
//     editors use), its violations mapped back to line:column;
//  5. the whole collection: duplicate ids, unknown or cyclic dependsOn, unknown servers, the
//     timeout hierarchy, undefined variables, the selected environment.
//
// # Two forms
//
// The simple form:
//
//	name: My First Tests
//	server: npx @modelcontextprotocol/server-filesystem /tmp
//	tests:
//	  - name: Read a file
//	    call: read_file
//	    with: {path: /tmp/test.txt}
//	    expect:
//	      - exists: $.content
//	  - name: Handle missing file
//	    call: read_file
//	    with: {path: /tmp/nonexistent.txt}
//	    expectError: true
//
// The advanced form adds schemaVersion, a server mapping (name, transport, command, args, env, cwd,
// url, headers, timeouts {connect, call, shutdown}), environments with defaultEnvironment, and
// tests with id, tags, timeout, retries, `type: tool` + `tool` + `input`, typed `assertions:`
// ({type: exists, path: $.name}) and `extract: [{name, path}]`. Both forms mix freely.
//
// Beyond a single server: `servers:` (named servers; a test picks one with `server: name`), `defaults:`
// (timeout, retries, server, tags), `variables:` (default variables), `dependsOn: [id…]`,
// `skip: true|reason`, `expectError: {code, message}`, and steps other than tools/call:
//
//	read: mcptest://static/hello.txt                  # resources/read
//	prompt: greet, arguments: {name: Ada}             # prompts/get
//	list: tools|resources|prompts|templates           # every page of a list
//	complete: {ref: {type: prompt, name: greet}, argument: {name: name, value: A}}
//	request: {method: ping, params: {}, notification: false}   # a raw JSON-RPC request
//
// A server is a command line ("npx server /tmp", split like a shell without expansion), a URL
// (http(s):// → Streamable HTTP, ws(s):// → WebSocket, tcp://host:port), "testserver [flags]" —
// the built-in reference server (package mcptest, `mcpspec testserver` flags such as
// --hang-first-call) so a collection needs nothing installed — or a mapping; `transport: sse`
// selects legacy HTTP+SSE and `transport: testserver` with `args:` the reference server.
//
// Durations are Go durations ("5s", "250ms") or bare integers of milliseconds (5000).
//
// # Timeouts
//
// A test's timeout (its own, else defaults.timeout, else 30s) bounds the whole test; a server's
// timeouts.call (default 25s) bounds one request and is capped by the test's deadline. Inner
// bounds must be below the outer one: an explicit defaults.timeout must exceed every server's
// explicit call timeout, and a latency assertion's bound must be below its test's timeout.
//
// # Variables
//
// Strings may hold {{name}} references (\{{ keeps braces literal). See [Vars] for precedence:
// extracted > --var > --env-file > selected environment > `variables:`. {{env.NAME}} and
// {{secret.NAME}} read the process environment through LoadOptions.LookupEnv; secret values, and
// values of variables, headers and env entries whose names contain key, token, secret, password
// or auth, are registered with the collection's [Masker]. Every reference is checked at load: a
// test may use a variable extracted by a test it depends on or by an earlier test (which then
// becomes an implicit dependency, listed in [Test.Requires]).
//
// # Reserved blocks
//
// `deadlock:`, `race:` and `head-of-line:` configure the detectors ([DeadlockSpec], [RaceSpec],
// [HeadOfLineSpec]), which `mcpspec test` runs after the tests, on the block's server (the
// default server when it names none); so does `probe:` ([ProbeSpec]), the conformance probe,
// whose rows become tests of kind "probe". `load:` and `fuzz:` are parsed and validated
// ([LoadSpec], [FuzzSpec]) so collections can carry them today; `mcpspec test` ignores them.
package collection
