package localguard

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

// Limits of the project scan: at most MaxFiles YAML files, found at most MaxDepth directories
// below the working directory; the allowlist is at most maxAllowFile bytes.
const (
	MaxFiles     = 500
	MaxDepth     = 4
	maxAllowFile = 1 << 20
)

// Server is one server a front end may start or connect to.
type Server struct {
	// Name is how a page shows it: the collection's server name, or the SPEC.
	Name string `json:"name"`
	// Spec is the SPEC it is opened with (as --server takes it).
	Spec string `json:"spec"`
	// Source says why it is allowed: "collection FILE", "allowlist FILE:LINE" or "built-in".
	Source string `json:"source"`
}

// Servers is the set of servers a front end may start: testserver (with any of its flags),
// the servers of the collections under a directory, and the lines of an allowlist.
type Servers struct {
	root      string
	allowFile string
	list      []Server
	canon     map[string]bool
}

// RefusedError is a server [Servers.Allowed] refuses; its message says how to allow it.
type RefusedError struct {
	Msg string
}

func (e *RefusedError) Error() string { return e.Msg }

// LoadServers reads the servers of the working directory dir: those named in its collections
// (*.yaml and *.yml files with a top-level tests: or schemaVersion: key that load; at most
// MaxDepth deep; hidden directories, node_modules, vendor and testdata skipped; a server with a
// {{variable}} skipped) and those of allowFile (one SPEC a line, blank lines and # comments
// skipped; "" for none). A line of allowFile that is not a SPEC is an error naming FILE:LINE.
func LoadServers(dir, allowFile string) (*Servers, error) {
	root, err := filepath.Abs(dir)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	s := &Servers{root: root, allowFile: allowFile, canon: map[string]bool{}}
	s.list = append(s.list, Server{Name: spec.BuiltinName, Spec: spec.BuiltinName, Source: "built-in"})
	for _, path := range CollectionFiles(root) {
		rel, _ := filepath.Rel(root, path)
		s.addCollection(path, filepath.ToSlash(rel))
	}
	if allowFile != "" {
		if err := s.readAllowFile(allowFile); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Root is the working directory, symbolic links resolved.
func (s *Servers) Root() string { return s.root }

// List is the allowed servers: testserver first, then the collections' in file order, then the
// allowlist's; each SPEC once.
func (s *Servers) List() []Server { return slices.Clone(s.list) }

// Allowed returns nil when SPEC sp may be started, else a [*RefusedError] whose message names
// tool (e.g. "mcpspec mcp") and says how to allow it. SPECs compare word by word, so quoting
// and spacing do not matter.
func (s *Servers) Allowed(tool, sp string) error {
	c, ok := Canonical(sp)
	if !ok {
		return &RefusedError{Msg: fmt.Sprintf("server %q is not a SPEC: give a command line, a URL or testserver", sp)}
	}
	if w, _ := spec.Split(c); w[0] == spec.BuiltinName {
		return nil
	}
	if s.canon[c] {
		return nil
	}
	how := fmt.Sprintf("restart `%s` with --allow FILE, FILE holding this SPEC on a line of its own", tool)
	if s.allowFile != "" {
		how = fmt.Sprintf("add this SPEC as a line of %s and restart `%s`", s.allowFile, tool)
	}
	return &RefusedError{Msg: fmt.Sprintf("server %q is not allowed: %s starts only testserver, the servers of the collections (*.yaml) under %s, and those of its allowlist; to allow it, name it in a collection there or %s", sp, tool, s.root, how)}
}

func (s *Servers) add(srv Server) {
	c, ok := Canonical(srv.Spec)
	if !ok || s.canon[c] {
		return
	}
	s.canon[c] = true
	s.list = append(s.list, srv)
}

// addCollection adds the servers of the collection at path, if it is one that loads.
func (s *Servers) addCollection(path, rel string) {
	b, err := regfile.ReadFile(path, collection.DefaultMaxFileSize)
	if err != nil || !IsCollection(b) {
		return
	}
	col, err := collection.Load(path, nil)
	if err != nil {
		return
	}
	cname := col.Name
	if cname == "" {
		cname = rel
	}
	names := make([]string, 0, len(col.Servers))
	for n := range col.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		name := n
		if n == collection.DefaultServerName {
			name = cname
		}
		specs := ServerSpecs(col.Servers[n])
		if len(specs) == 0 {
			continue
		}
		s.add(Server{Name: name, Spec: specs[0], Source: "collection " + rel})
		for _, sp := range specs[1:] { // another spelling of the same server: allowed, not listed
			if c, ok := Canonical(sp); ok {
				s.canon[c] = true
			}
		}
	}
}

func (s *Servers) readAllowFile(name string) error {
	data, err := regfile.ReadFile(name, maxAllowFile)
	if err != nil {
		return fmt.Errorf("--allow %s: %w", name, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxAllowFile)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if _, ok := Canonical(line); !ok {
			why := "an empty command"
			if _, err := spec.Split(line); err != nil {
				why = err.Error()
			}
			return fmt.Errorf("%s:%d: %q is not a SPEC (a command line or a URL): %s", name, n, line, why)
		}
		s.add(Server{Name: line, Spec: line, Source: fmt.Sprintf("allowlist %s:%d", filepath.Base(name), n)})
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("--allow %s: %w", name, err)
	}
	return nil
}

// Canonical is SPEC s as words joined again, so that quoting and spacing do not matter; false
// when s is not a SPEC (unbalanced quotes, or empty).
func Canonical(s string) (string, bool) {
	w, err := spec.Split(strings.TrimSpace(s))
	if err != nil || len(w) == 0 || w[0] == "" {
		return "", false
	}
	return spec.Join(w), true
}

// IsCollection reports whether a YAML document has a top-level tests: or schemaVersion: key.
func IsCollection(b []byte) bool {
	for line := range bytes.Lines(b) {
		if bytes.HasPrefix(line, []byte("tests:")) || bytes.HasPrefix(line, []byte("schemaVersion:")) {
			return true
		}
	}
	return false
}

// ServerSpecs are the SPECs that name a collection's server: testserver with its args, its
// URL (tcp:// added to a bare TCP address), or its command line (and, when the command holds
// several words, those words with the args). None when it holds a {{variable}}, which only a
// run resolves.
func ServerSpecs(s *collection.Server) []string {
	if s == nil {
		return nil
	}
	var out []string
	switch s.Transport {
	case collection.TransportTestServer:
		out = []string{spec.Join(append([]string{spec.BuiltinName}, s.Args...))}
	case collection.TransportStdio:
		if s.Command == "" {
			return nil
		}
		out = []string{spec.Join(append([]string{s.Command}, s.Args...))}
		if w, err := spec.Split(s.Command); err == nil && len(w) > 1 {
			out = append(out, spec.Join(append(w, s.Args...)))
		}
	default:
		u := s.URL
		if s.Transport == collection.TransportTCP && u != "" && !strings.Contains(u, "://") {
			u = "tcp://" + u
		}
		if u == "" {
			return nil
		}
		out = []string{u}
	}
	for _, o := range out {
		if strings.Contains(o, "{{") {
			return nil
		}
	}
	return out
}

// CollectionFiles lists the *.yaml and *.yml files under root (at most MaxFiles, at most
// MaxDepth directories deep), skipping hidden directories, node_modules, vendor and testdata.
func CollectionFiles(root string) []string {
	var out []string
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable directory is skipped, not fatal
		}
		if d.IsDir() {
			rel, _ := filepath.Rel(root, path)
			name := d.Name()
			if rel != "." && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "vendor" || name == "testdata" ||
				strings.Count(filepath.ToSlash(rel), "/") >= MaxDepth) {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(path); (ext == ".yaml" || ext == ".yml") && d.Type().IsRegular() {
			out = append(out, path)
			if len(out) >= MaxFiles {
				return filepath.SkipAll
			}
		}
		return nil
	})
	return out
}
