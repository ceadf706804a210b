package archtest

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestExternalModule proves that the library can be used from another module: it copies
// testdata/extmod to a temporary directory, writes a go.mod there that requires this module
// through a replace directive to the checkout, and runs its tests, which open the reference
// server, run every detector, a load run and a collection, and check their reports. The build
// is offline (GOPROXY=off): every module it needs is one this module needs, already in the
// module cache, and the checksums are this module's go.sum.
func TestExternalModule(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: building and running a module outside this one takes a minute")
	}
	top := root(t)
	dir := t.TempDir()
	src := filepath.Join("testdata", "extmod", "extmod_test.go")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "extmod_test.go"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(top, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	gomod := "module example.com/extmod\n\ngo 1.26\n\nrequire " + module + " v0.0.0\n\nreplace " + module + " => " + strconv.Quote(top) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off"}
	out := goCmd(t, 10*time.Minute, dir, env, "test", "-count=1", "-v", "./...")
	t.Logf("%s", out)
}
