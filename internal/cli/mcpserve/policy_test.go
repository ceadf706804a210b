package mcpserve

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPolicyServers: testserver, a collection's server and an allowlist line are allowed
// (however quoted); anything else is refused with a message that says how to allow it.
func TestPolicyServers(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "sub", "api.yaml"), "schemaVersion: \"1.0\"\nname: API\nserver:\n  command: python3\n  args: [-m, my_server, --port, \"8080\"]\ntests:\n  - name: echo\n    call: echo\n")
	write(t, filepath.Join(dir, "remote.yaml"), "schemaVersion: \"1.0\"\nname: Remote\nserver: http://127.0.0.1:9999/mcp\ntests:\n  - name: echo\n    call: echo\n")
	write(t, filepath.Join(dir, ".hidden", "x.yaml"), "schemaVersion: \"1.0\"\nname: Hidden\nserver: hidden-server\ntests:\n  - name: echo\n    call: echo\n")
	write(t, filepath.Join(dir, "notes.yaml"), "just: some yaml\n")
	allow := filepath.Join(t.TempDir(), "allow.txt")
	write(t, allow, "# servers the agent may start\n\nnode 'my server.js'   stdio\n")
	p, err := LoadPolicy(dir, allow)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"testserver", "testserver --hang-when-concurrent",
		"python3 -m my_server --port 8080", "python3  -m my_server --port '8080'",
		"http://127.0.0.1:9999/mcp",
		`node "my server.js" stdio`,
	} {
		if err := p.Server(s); err != nil {
			t.Errorf("Server(%q) = %v, want allowed", s, err)
		}
	}
	for _, s := range []string{"python3 -m my_server", "sh -c 'rm -rf ~'", "hidden-server", "http://127.0.0.1:9998/mcp", "", "'unterminated"} {
		err := p.Server(s)
		var re *RefusedError
		if !errors.As(err, &re) {
			t.Errorf("Server(%q) = %v, want a refusal", s, err)
			continue
		}
		if s != "" && s != "'unterminated" && !strings.Contains(err.Error(), allow) {
			t.Errorf("Server(%q): the refusal does not say how to allow it: %v", s, err)
		}
	}
	p2, err := LoadPolicy(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := p2.Server("sh"); err == nil || !strings.Contains(err.Error(), "--allow FILE") {
		t.Errorf("without --allow, the refusal does not name --allow FILE: %v", err)
	}
}

// TestPolicyAllowFileErrors: a line that is not a SPEC is an error with file:line.
func TestPolicyAllowFileErrors(t *testing.T) {
	allow := filepath.Join(t.TempDir(), "allow.txt")
	write(t, allow, "testserver\nnode 'unterminated\n")
	_, err := LoadPolicy(t.TempDir(), allow)
	if err == nil || !strings.Contains(err.Error(), allow+":2:") {
		t.Fatalf("err = %v, want one naming %s:2", err, allow)
	}
	if _, err := LoadPolicy(t.TempDir(), filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("a missing allowlist was accepted")
	}
}

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
