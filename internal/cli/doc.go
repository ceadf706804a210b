// Package cli is the mcpspec command line: verbs, flags, exit codes, signals and everything that
// touches process state (os.Stdout, os.Stderr, os.Stdin, the environment, os.Exit).
//
// Library packages never print or exit; they return errors, classified by package session where
// a server is involved. This package turns those errors into a message with a hint on stderr and
// an exit code from the one table in app_exitcodes.go.
//
// Layout: a file's name starts with its verb family, so "where is X?" is one ls away:
//
//   - app*.go: what every verb shares: app.go assembles the verbs; app_flags.go holds the flags
//     of every verb that talks to a server and app_connect.go opens the session they describe;
//     exit codes, errors, --json outcomes, progress, signals, usage and version;
//   - server_*.go: verbs that talk to one server by hand: tools, call, the one-shot verbs, inspect
//     (with its completion), testserver, and the stray-answer findings they print;
//   - test*.go: collections: test (its plan, data rows and load blocks), validate, baselines and
//     compare;
//   - load*.go: load, bench, report, merge and compare of run directories;
//   - detect*.go: deadlock, race, head-of-line, fuzz and probe, over one shared runner;
//   - analyze_*.go: audit, tokens, docs, retrieval, score and inventory.
package cli
