// Package detecttest holds the detectors' tests' shared setup: an opener for a SPEC and one
// run of a detector under a deadline, its text report logged. It lives under detect/ because it
// opens sessions (session/serverconn), which the leaf internal/ packages may not import.
package detecttest
