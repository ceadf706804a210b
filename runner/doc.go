// Package runner executes loaded collections against their servers and fills a [result.Run].
//
//	r := runner.New(&runner.Options{Parallel: 4, OnEvent: rep.Event})
//	run, err := r.Run(ctx, cols)   // run is complete, or partial when err says why
//
// # What a run does
//
// Collections run one after another. Inside a collection, tests run in file order, except that a
// test runs only after every test it depends on (`dependsOn`, and the tests whose extracted
// variables it uses: [collection.Test.Requires]); a test whose dependency did not pass is Skipped
// with the reason. With Options.Parallel = N, up to N tests without a dependency between them run
// at once, each on its own session: every server gets a pool of at most N sessions, opened lazily
// on first use and reused by later tests.
//
// Each test expands its variables (extracted values > --var > --env-file > environment >
// `variables:`), sends its step, and checks the outcome:
//
//   - `expectError` passes on a JSON-RPC error or a tool result with isError, when its optional
//     code and message match; the assertions then see the error ({error: {code, message, data}})
//     or the tool result;
//   - otherwise a JSON-RPC error or a transport failure makes the test Errored with the session's
//     fault category (Crash, Timeout, ServerError …) and a hint, and a tool result with isError
//     makes it Failed unless the test asserts on isError itself;
//   - then every compiled assertion is checked, and on success the `extract` values are stored for
//     later tests.
//
// A test's timeout bounds each attempt (the request, its wire timeout capped by it, and the
// assertions). A test with `retries: n` is attempted up to n+1 times while it does not pass,
// waiting Options.Backoff between attempts (exponential: 1s, 2s, 4s … up to 30s by default);
// every attempt is kept in [result.Test.Attempts] and the last one decides the status.
//
// # Secrets
//
// Every string that reaches the result — request and response excerpts, error messages and
// hints, failure values, extracted values, server targets and stderr excerpts — goes through the
// collection's [collection.Masker], which masks every encoded form of a secret as well (see
// [github.com/mcpspec/mcpspec/redact.Forms]). A test's values are extracted (registering
// secret-looking names) before the test is masked, so a token a test extracts never shows in its
// own response.
//
// # Findings
//
// What a server sends that answers no request — a response to an id never issued, a second
// answer, a malformed frame nobody waited for — is a [result.Finding] of the test that held the
// session when it came (the session is given back only once the attempt is judged); one that
// came between tests goes to the next test on that session, and one that came after the last to
// the collection. Before a collection's sessions close, each server that still answers gets a
// ping, so a second answer to the last request is read rather than closed over. With
// Options.Strict an attempt with findings fails (assertion "strict").
//
// # Failures of the run itself
//
// A server that cannot be started or reached is tried once: the first test that needs it is
// Errored with the classified category and a hint (a missing module or program quoted from the
// server's stderr), and its later tests are Skipped as "not run", naming that test; other
// servers go on. Run returns a [*ConnectError] (with the partial
// run) when no server at all could be connected. Cancelling ctx (Ctrl-C) ends the tests in
// flight as Errored (Cancelled), marks the rest Skipped, sets [result.Run.Interrupted] and
// returns the partial run with an error matching [ErrInterrupted], so every report can still be
// written. Options.Bail stops starting tests after the first failure the same way, without an
// error. Every session is closed (child servers stopped) before Run returns.
//
// # Events
//
// Options.OnEvent sees RunStarted, CollectionStarted, TestStarted, TestFinished,
// CollectionFinished and RunFinished as they happen. Events are handed to the observer by one
// goroutine through a buffer of Options.EventBuffer events, so a slow observer never slows the
// tests; when the buffer is full, events are dropped (counted in [Runner.Dropped]) rather than
// blocking. TestStarted carries a copy of the test; TestFinished, CollectionFinished and
// RunFinished carry the final objects, which the runner no longer changes.
package runner
