package ui

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/internal/regfile"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// Limits of the project scan: the UI lists at most maxCollections collections, found at most
// maxDepth directories below the working directory, each file at most maxFile bytes.
const (
	maxCollections = 200
	maxDepth       = 4
	maxAllowFile   = 1 << 20
)

// AllowedServer is one server the UI may start or connect to.
type AllowedServer struct {
	// Name is how the page shows it: the collection's server name, or the SPEC.
	Name string `json:"name"`
	// Spec is the SPEC it is opened with (as --server takes it).
	Spec string `json:"spec"`
	// Source says why it is allowed: "collection FILE", "allowlist FILE" or "built-in".
	Source string `json:"source"`
}

// Collection is one collection file of the project.
type Collection struct {
	// Path is the file, relative to the project directory, with forward slashes.
	Path string `json:"path"`
	// Name is the collection's name.
	Name string `json:"name"`
	// Tests names its tests, in file order.
	Tests []string `json:"tests"`
	// Error is why the file did not load, or "".
	Error string `json:"error,omitempty"`
}

// project is what the UI found in the working directory and the allowlist.
type project struct {
	dir         string
	collections []Collection
	servers     []AllowedServer
}

// scanProject lists the collections under dir (*.yaml and *.yml files whose top level has
// `tests:`, at most maxDepth deep, skipping hidden directories and node_modules) and the
// servers they name; allowFile, when not "", adds one SPEC a line (# starts a comment).
func scanProject(dir, allowFile string) (*project, error) {
	p := &project{dir: dir}
	p.servers = append(p.servers, AllowedServer{Name: "testserver", Spec: spec.BuiltinName, Source: "built-in"})
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable directory is skipped, not fatal
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "vendor" || name == "testdata" ||
				strings.Count(filepath.ToSlash(rel), "/") >= maxDepth) {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(path); ext != ".yaml" && ext != ".yml" || !d.Type().IsRegular() {
			return nil
		}
		if len(p.collections) >= maxCollections {
			return filepath.SkipAll
		}
		if c, ok := p.readCollection(path, filepath.ToSlash(rel)); ok {
			p.collections = append(p.collections, c)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if allowFile != "" {
		srv, err := readAllowFile(allowFile)
		if err != nil {
			return nil, err
		}
		for _, s := range srv {
			p.addServer(s)
		}
	}
	return p, nil
}

// readCollection loads one YAML file as a collection; ok is false for a YAML file that is not
// one (no top-level tests: key).
func (p *project) readCollection(path, rel string) (Collection, bool) {
	b, err := regfile.ReadFile(path, collection.DefaultMaxFileSize)
	if err != nil || !isCollection(b) {
		return Collection{}, false
	}
	c := Collection{Path: rel, Name: rel}
	col, err := collection.Load(path, nil)
	if err != nil {
		c.Error = err.Error()
		return c, true
	}
	if col.Name != "" {
		c.Name = col.Name
	}
	for _, t := range col.Tests {
		c.Tests = append(c.Tests, t.Name)
	}
	names := make([]string, 0, len(col.Servers))
	for n := range col.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s, ok := serverSpec(col.Servers[n])
		if !ok {
			continue
		}
		name := n
		if n == collection.DefaultServerName {
			name = c.Name
		}
		p.addServer(AllowedServer{Name: name, Spec: s, Source: "collection " + rel})
	}
	return c, true
}

// isCollection reports whether a YAML document has a top-level tests: (or schemaVersion:) key.
func isCollection(b []byte) bool {
	for line := range bytes.Lines(b) {
		if bytes.HasPrefix(line, []byte("tests:")) || bytes.HasPrefix(line, []byte("schemaVersion:")) {
			return true
		}
	}
	return false
}

// serverSpec is the SPEC of a collection's server; false when it has none the UI can use (a
// variable in it, which only a run resolves).
func serverSpec(s *collection.Server) (string, bool) {
	var out string
	switch s.Transport {
	case collection.TransportTestServer:
		out = spec.Join(append([]string{spec.BuiltinName}, s.Args...))
	case collection.TransportStdio:
		out = spec.Join(append([]string{s.Command}, s.Args...))
	default:
		out = s.URL
		if s.Transport == collection.TransportTCP && !strings.Contains(out, "://") {
			out = "tcp://" + out
		}
	}
	if out == "" || strings.Contains(out, "{{") {
		return "", false
	}
	return out, true
}

// readAllowFile reads an allowlist: one SPEC a line; blank lines and # comments are skipped.
func readAllowFile(path string) ([]AllowedServer, error) {
	b, err := regfile.ReadFile(path, maxAllowFile)
	if err != nil {
		return nil, fmt.Errorf("--allow %s: %w", path, err)
	}
	var out []AllowedServer
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), maxAllowFile)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if _, err := spec.Split(line); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, AllowedServer{Name: line, Spec: line, Source: "allowlist " + filepath.Base(path)})
	}
	return out, sc.Err()
}

// addServer adds s unless a server with the same SPEC is listed.
func (p *project) addServer(s AllowedServer) {
	if slices.ContainsFunc(p.servers, func(o AllowedServer) bool { return sameSpec(o.Spec, s.Spec) }) {
		return
	}
	p.servers = append(p.servers, s)
}

// allowed reports whether the UI may open SPEC s: a server of the project or the allowlist
// (compared word by word), or the built-in testserver with any of its flags.
func (p *project) allowed(s string) bool {
	words, err := spec.Split(s)
	if err != nil || len(words) == 0 {
		return false
	}
	if words[0] == spec.BuiltinName {
		return true
	}
	return slices.ContainsFunc(p.servers, func(o AllowedServer) bool { return sameSpec(o.Spec, s) })
}

// collection returns the project's collection at rel, or false.
func (p *project) collection(rel string) (Collection, bool) {
	for _, c := range p.collections {
		if c.Path == rel {
			return c, true
		}
	}
	return Collection{}, false
}

// sameSpec compares two SPECs word by word.
func sameSpec(a, b string) bool {
	wa, errA := spec.Split(a)
	wb, errB := spec.Split(b)
	return errA == nil && errB == nil && slices.Equal(wa, wb)
}
