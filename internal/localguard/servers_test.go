package localguard

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, name, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// col is a one-test collection whose server mapping is server (YAML, one line).
func col(name, server string) string {
	return "schemaVersion: \"1.0\"\nname: " + name + "\n" + server + "\ntests:\n  - name: t\n    call: echo\n"
}

// TestServers: testserver (with any flags), a collection's server and an allowlist line are
// allowed however they are quoted; servers of hidden, node_modules, vendor, testdata or too
// deep directories, of files that are not collections, and with {{variables}} are not; a
// refusal says how to allow it. (The rules mcpspec mcp and mcpspec ui each had a copy of.)
func TestServers(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "sub", "api.yaml"), col("API", "server:\n  command: python3\n  args: [-m, my_server, --port, \"8080\"]"))
	write(t, filepath.Join(dir, "a.yaml"), col("A", "server:\n  command: python3\n  args: [\"-m\", \"my server\"]"))
	write(t, filepath.Join(dir, "remote.yaml"), col("Remote", "server: http://127.0.0.1:9999/mcp"))
	write(t, filepath.Join(dir, "b.yml"), col("B", "servers:\n  web:\n    url: http://127.0.0.1:9/mcp\n  raw:\n    transport: tcp\n    url: 127.0.0.1:7000\n  ts:\n    transport: testserver\n    args: [--slow]\n  npx:\n    command: npx -y\n    args: [pkg]\n  var:\n    command: \"{{cmd}}\"\nvariables:\n  cmd: echo\ndefaults:\n  server: web"))
	write(t, filepath.Join(dir, ".hidden", "x.yaml"), col("Hidden", "server: hidden-server"))
	write(t, filepath.Join(dir, "node_modules", "c.yaml"), col("NM", "server: {command: nm-server}"))
	write(t, filepath.Join(dir, "vendor", "c.yaml"), col("V", "server: {command: vendor-server}"))
	write(t, filepath.Join(dir, "testdata", "c.yaml"), col("TD", "server: {command: testdata-server}"))
	write(t, filepath.Join(dir, "1", "2", "3", "4", "5", "deep.yaml"), col("Deep", "server: {command: deep-server}"))
	write(t, filepath.Join(dir, "1", "2", "3", "4", "shallow.yaml"), col("Shallow", "server: {command: shallow-server}"))
	write(t, filepath.Join(dir, "notes.yaml"), "just: some yaml\nserver: {command: notes-server}\n")
	allow := filepath.Join(t.TempDir(), "allow.txt")
	write(t, allow, "# servers the agent may start\n\nnode 'my server.js'   stdio\n  npx -y @modelcontextprotocol/server-everything  \n")
	s, err := LoadServers(dir, allow)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		spec string
		ok   bool
	}{
		{"testserver", true},
		{"testserver --hang-when-concurrent", true},
		{"python3 -m my_server --port 8080", true},
		{"python3  -m my_server --port '8080'", true},
		{"python3 -m 'my server'", true},
		{`python3 -m "my server"`, true},
		{"http://127.0.0.1:9999/mcp", true},
		{"http://127.0.0.1:9/mcp", true},
		{"tcp://127.0.0.1:7000", true},
		{"'npx -y' pkg", true},
		{"npx -y pkg", true},
		{`node "my server.js" stdio`, true},
		{"npx -y @modelcontextprotocol/server-everything", true},
		{"shallow-server", true},
		{"python3 -m my server", false},
		{"python3 -m my_server", false},
		{"python3 -m 'my server'; reboot", false},
		{"sh -c 'rm -rf ~'", false},
		{"hidden-server", false},
		{"nm-server", false},
		{"vendor-server", false},
		{"testdata-server", false},
		{"deep-server", false},
		{"notes-server", false},
		{"{{cmd}}", false},
		{"echo", false},
		{"http://127.0.0.1:9998/mcp", false},
		{"", false},
		{"''", false},
		{"'unterminated", false},
	} {
		err := s.Allowed("mcpspec mcp", c.spec)
		if c.ok {
			if err != nil {
				t.Errorf("Allowed(%q) = %v, want allowed", c.spec, err)
			}
			continue
		}
		var re *RefusedError
		if !errors.As(err, &re) {
			t.Errorf("Allowed(%q) = %v, want a refusal", c.spec, err)
			continue
		}
		if _, isSpec := Canonical(c.spec); isSpec && (!strings.Contains(err.Error(), allow) || !strings.Contains(err.Error(), "mcpspec mcp")) {
			t.Errorf("Allowed(%q): the refusal does not say how to allow it: %v", c.spec, err)
		}
	}
	seen := map[string]bool{}
	var got []string
	for _, srv := range s.List() {
		c, _ := Canonical(srv.Spec)
		if seen[c] {
			t.Errorf("List has %q twice", srv.Spec)
		}
		seen[c] = true
		got = append(got, srv.Name+"="+srv.Source)
	}
	for _, want := range []string{"testserver=built-in", "A=collection a.yaml", "web=collection b.yml", "API=collection sub/api.yaml", "node 'my server.js'   stdio=allowlist allow.txt:3"} {
		if !strings.Contains(strings.Join(got, "\n")+"\n", want+"\n") {
			t.Errorf("List lacks %s: %q", want, got)
		}
	}
	s2, err := LoadServers(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Allowed("mcpspec ui", "sh"); err == nil || !strings.Contains(err.Error(), "--allow FILE") || !strings.Contains(err.Error(), "`mcpspec ui`") {
		t.Errorf("without --allow, the refusal does not name --allow FILE and the tool: %v", err)
	}
}

// TestAllowFileErrors: a line that is not a SPEC is an error with FILE:LINE; a missing or
// oversized allowlist is an error naming it.
func TestAllowFileErrors(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ text, want string }{
		"unterminated": {"testserver\n# fine\nnode 'unterminated\n", ":3:"},
		"empty word":   {"\n''\n", ":2:"},
		"missing":      {"", "--allow "},
	} {
		t.Run(name, func(t *testing.T) {
			allow := filepath.Join(dir, name+".txt")
			if c.text != "" {
				write(t, allow, c.text)
			}
			_, err := LoadServers(t.TempDir(), allow)
			if err == nil || !strings.Contains(err.Error(), allow) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one naming %s and %q", err, allow, c.want)
			}
		})
	}
}
