// Package reporters renders a finished [result.Run] — and, for reporters that stream, the
// [result.Event]s of a live run — in six formats: console, json, junit, tap, html and markdown.
//
// A reporter knows nothing of how a run was produced: it reads the plain result model and writes
// bytes. Output is deterministic for a given Run (collections and tests keep the order the run
// recorded, maps are rendered sorted, no wall-clock time is read), so golden files are stable.
// Secrets are masked by the runner before they reach the result model, and the CLI passes
// every report through a [github.com/mcpspec/mcpspec/redact.Writer]; reporters do not mask again.
//
// Using it from the CLI:
//
//	rep, err := reporters.New("console", &reporters.Options{Color: isTTY && noColor == "", TTY: isTTY, Live: os.Stderr})
//	if err != nil { … }                      // unknown name: errors.Is(err, reporters.ErrUnknown)
//	if s, ok := rep.(reporters.Streamer); ok { … pass s.Event to the runner as an observer … }
//	… run …
//	err = rep.Report(os.Stdout, run)          // final render, once, after the run
//
// Which reporters stream, and what: ask a [Streamer] its [StreamKind]. [Console] streams
// progress (a ✓/✗ line per finished test, for the terminal) and [TAP] its report (test points as
// they finish, into the writer Report completes). Event implementations are safe for concurrent
// use and never block on anything but their writer.
package reporters
