// Package cli is the mcpspec command line: verbs, flags, exit codes, signals and everything that
// touches process state (os.Stdout, os.Stderr, os.Stdin, the environment, os.Exit).
//
// Library packages never print or exit; they return errors, classified by package session where
// a server is involved. This package turns those errors into a message with a hint on stderr and
// an exit code from the one table in exitcodes.go.
//
// Layout: app.go assembles the verbs; each verb lives in its own file (version.go, tools.go,
// call.go, inspect.go, testserver.go); flags.go holds the flags shared by every verb that talks
// to a server and connect.go opens the session they describe.
package cli
