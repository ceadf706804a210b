package testparallel

import (
	"flag"
	"runtime"
	"strconv"
	"testing"
)

// TestRaise raises -test.parallel and checks the value in force: 64, or what the command
// line gave (go test -parallel 3).
func TestRaise(t *testing.T) {
	f := flag.Lookup("test.parallel")
	before := f.Value.String()
	t.Cleanup(func() { _ = f.Value.Set(before) })
	given := false
	flag.Visit(func(v *flag.Flag) { given = given || v.Name == "test.parallel" })

	want := strconv.Itoa(max(64, runtime.GOMAXPROCS(0)))
	if given {
		want = before // the command line wins
	}
	got := Raise(64)
	if strconv.Itoa(got) != want || f.Value.String() != want {
		t.Errorf("Raise(64) = %d, -test.parallel %s; want %s (given on the command line: %v)", got, f.Value.String(), want, given)
	}
	// Never below GOMAXPROCS.
	if !given {
		_ = f.Value.Set(before)
		if got := Raise(1); got < runtime.GOMAXPROCS(0) {
			t.Errorf("Raise(1) = %d, below GOMAXPROCS %d", got, runtime.GOMAXPROCS(0))
		}
	}
}
