package mcpserve

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestPolicyPaths: paths stay in the working directory, symbolic links resolved.
func TestPolicyPaths(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	write(t, filepath.Join(dir, "c.yaml"), "x")
	write(t, filepath.Join(dir, "runs", "r1", "metrics.json"), "{}")
	write(t, filepath.Join(outside, "secret.json"), "{}")
	if err := os.Symlink(filepath.Join(outside, "secret.json"), filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "c.yaml"), filepath.Join(dir, "inner.yaml")); err != nil {
		t.Fatal(err)
	}
	p, err := LoadPolicy(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, ok := range []string{"c.yaml", "runs/r1", "./runs/r1/metrics.json", filepath.Join(dir, "c.yaml"), "inner.yaml", "."} {
		if _, err := p.Path(ok); err != nil {
			t.Errorf("Path(%q) = %v, want allowed", ok, err)
		}
	}
	for _, bad := range []string{"", "../x", "runs/../c.yaml", filepath.Join(outside, "secret.json"), "link.json", "/etc/passwd", "missing.yaml"} {
		var re *RefusedError
		if _, err := p.Path(bad); !errors.As(err, &re) {
			t.Errorf("Path(%q) = %v, want a refusal", bad, err)
		}
	}
}

func write(t *testing.T, name, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
