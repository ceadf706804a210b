package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records failures instead of stopping the test.
type recorder struct {
	testing.TB
	failed []string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Errorf(f string, a ...any) { r.failed = append(r.failed, f) }
func (r *recorder) Fatalf(f string, a ...any) { r.failed = append(r.failed, f) }
func (r *recorder) Fatal(a ...any)            { r.failed = append(r.failed, "fatal") }

func TestCheck(t *testing.T) {
	if Update() {
		t.Skip("under -update Check writes instead of comparing")
	}
	path := filepath.Join(t.TempDir(), "out.golden")
	if err := os.WriteFile(path, []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	Check(r, path, []byte("same\n"))
	if len(r.failed) != 0 {
		t.Errorf("equal output failed: %v", r.failed)
	}
	Check(r, path, []byte("other\n"))
	if len(r.failed) != 1 || !strings.Contains(r.failed[0], "-want +got") {
		t.Errorf("different output: %v, want one diff", r.failed)
	}
	r.failed = nil
	Check(r, filepath.Join(t.TempDir(), "missing.golden"), nil)
	if len(r.failed) != 1 || !strings.Contains(r.failed[0], "-update creates it") {
		t.Errorf("missing file: %v, want one failure naming -update", r.failed)
	}
}

func TestCheckUpdate(t *testing.T) {
	old := *update
	*update = true
	t.Cleanup(func() { *update = old })
	path := filepath.Join(t.TempDir(), "new", "out.golden")
	Check(t, path, []byte("fresh\n"))
	if b, err := os.ReadFile(path); err != nil || string(b) != "fresh\n" {
		t.Errorf("after -update the file holds %q, %v", b, err)
	}
}
