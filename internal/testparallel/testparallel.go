// Package testparallel lets the parallel tests of a package that waits far more than it
// computes overlap beyond GOMAXPROCS. A test binary runs at most -test.parallel parallel tests
// at once, GOMAXPROCS by default: 2 on a 2-core machine, where tests that spend their time
// waiting on child processes, sockets and a detector's watches leave the cores idle.
package testparallel

import (
	"flag"
	"runtime"
	"strconv"
)

// Raise sets -test.parallel to n (never below GOMAXPROCS) unless the command line gave it, and
// returns the value in force. Call it from TestMain before m.Run, in a package whose tests
// use little CPU for their wall time (measure it: `/usr/bin/time` on the test binary).
func Raise(n int) int {
	if !flag.Parsed() {
		flag.Parse()
	}
	f := flag.Lookup("test.parallel")
	if f == nil {
		return 0 // not a test binary
	}
	given := false
	flag.Visit(func(v *flag.Flag) { given = given || v.Name == "test.parallel" })
	if !given {
		_ = f.Value.Set(strconv.Itoa(max(n, runtime.GOMAXPROCS(0))))
	}
	got, _ := strconv.Atoi(f.Value.String())
	return got
}
