// Package golden compares a test's output with a golden file and rewrites the file instead when
// the test binary runs with -update. It is the one home of -update: a test package that imports
// it declares no flag of its own (a flag can be registered only once per test binary).
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// update is -update. A flag is process-wide by nature and must be registered before the testing
// package parses the command line, so it lives here, once, rather than in each test package.
var update = flag.Bool("update", false, "rewrite the golden files (and testscript cmp files) from the current output")

// Update reports whether the test binary runs with -update, for tests that regenerate something
// other than a plain golden file.
func Update() bool { return *update }

// Check fails t with a diff (-want +got) when got differs from the file at path. Under -update
// it writes got to path instead, creating its directory.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", path, d)
	}
}
