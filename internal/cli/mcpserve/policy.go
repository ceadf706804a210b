package mcpserve

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/internal/regfile"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// maxScan bounds the collections [LoadPolicy] reads under the working directory.
const maxScan = 500

// maxAllowFile bounds the allowlist file.
const maxAllowFile = 1 << 20

// Policy says which servers a tool may start and which paths it may read.
type Policy struct {
	// root is the working directory, symbolic links resolved.
	root string
	// allowed holds every allowed SPEC in its canonical form (see [canonical]).
	allowed map[string]string
	// allowFile is the --allow file ("" when none), named in refusals.
	allowFile string
}

// RefusedError is a server or path a [Policy] does not allow; its message says how to allow it.
type RefusedError struct {
	Msg string
}

func (e *RefusedError) Error() string { return e.Msg }

// LoadPolicy builds the policy of the working directory dir: the servers named in its
// collections (*.yaml, *.yml under dir, hidden directories and node_modules skipped; files that
// are not valid collections are ignored) and those of allowFile (one SPEC per line, # comments;
// "" for none). An unreadable allowlist is an error naming its file and line.
func LoadPolicy(dir, allowFile string) (*Policy, error) {
	root, err := filepath.Abs(dir)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	p := &Policy{root: root, allowed: map[string]string{}, allowFile: allowFile}
	for _, path := range collectionFiles(root) {
		c, err := collection.Load(path, nil)
		if err != nil {
			continue
		}
		rel, _ := filepath.Rel(root, path)
		for _, s := range c.Servers {
			for _, sp := range serverSpecs(s) {
				p.add(sp, rel)
			}
		}
	}
	if allowFile != "" {
		if err := p.readAllowFile(allowFile); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Root is the working directory the policy confines paths to.
func (p *Policy) Root() string { return p.root }

// Allowed lists the allowed SPECs (besides testserver), sorted.
func (p *Policy) Allowed() []string {
	out := make([]string, 0, len(p.allowed))
	for k := range p.allowed {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func (p *Policy) add(s, from string) {
	if c, ok := canonical(s); ok {
		if _, dup := p.allowed[c]; !dup {
			p.allowed[c] = from
		}
	}
}

func (p *Policy) readAllowFile(name string) error {
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
		if _, ok := canonical(line); !ok {
			return fmt.Errorf("%s:%d: %q is not a SPEC (a command line or a URL)", name, n, line)
		}
		p.add(line, fmt.Sprintf("%s:%d", name, n))
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("--allow %s: %w", name, err)
	}
	return nil
}

// Server checks that the SPEC s may be started: "testserver" (with any of its flags), a
// server named in a collection under the working directory, or a line of the allowlist.
func (p *Policy) Server(s string) error {
	c, ok := canonical(s)
	if !ok {
		return &RefusedError{Msg: fmt.Sprintf("server %q is not a SPEC: give a command line, a URL or testserver", s)}
	}
	if w, _ := spec.Split(c); len(w) > 0 && w[0] == "testserver" {
		return nil
	}
	if _, ok := p.allowed[c]; ok {
		return nil
	}
	how := "restart `mcpspec mcp` with --allow FILE, FILE holding this SPEC on a line of its own"
	if p.allowFile != "" {
		how = fmt.Sprintf("add this SPEC as a line of %s and restart `mcpspec mcp`", p.allowFile)
	}
	return &RefusedError{Msg: fmt.Sprintf("server %q is not allowed: mcpspec mcp starts only testserver, the servers of the collections (*.yaml) under %s, and those of its allowlist; to allow it, name it in a collection there or %s", s, p.root, how)}
}

// Path resolves name (relative to the working directory, or absolute inside it) to an
// existing file or directory inside the working directory: a ".." element, a path outside it,
// or a symbolic link that leads out of it is refused.
func (p *Policy) Path(name string) (string, error) {
	if name == "" {
		return "", &RefusedError{Msg: "empty path: give a path relative to " + p.root}
	}
	if slices.Contains(strings.FieldsFunc(filepath.ToSlash(name), func(r rune) bool { return r == '/' }), "..") {
		return "", &RefusedError{Msg: fmt.Sprintf("path %q: \"..\" is not allowed: give a path inside %s", name, p.root)}
	}
	full := name
	if !filepath.IsAbs(full) {
		full = filepath.Join(p.root, full)
	}
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", &RefusedError{Msg: fmt.Sprintf("path %q does not exist under %s", name, p.root)}
		}
		return "", &RefusedError{Msg: fmt.Sprintf("path %q: %v", name, err)}
	}
	if !within(p.root, real) {
		return "", &RefusedError{Msg: fmt.Sprintf("path %q is outside the working directory %s (symbolic links resolved): mcpspec mcp reads only files under it", name, p.root)}
	}
	return real, nil
}

// within reports whether path is root or below it.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// canonical is s as words joined again, so that quoting and spacing do not matter.
func canonical(s string) (string, bool) {
	w, err := spec.Split(strings.TrimSpace(s))
	if err != nil || len(w) == 0 {
		return "", false
	}
	return spec.Join(w), true
}

// serverSpecs are the SPECs that name a collection's server: its URL, or its command line.
func serverSpecs(s *collection.Server) []string {
	if s == nil {
		return nil
	}
	if s.URL != "" {
		return []string{s.URL}
	}
	if s.Command == "" {
		return nil
	}
	out := []string{spec.Join(append([]string{s.Command}, s.Args...))}
	if w, err := spec.Split(s.Command); err == nil && len(w) > 1 {
		out = append(out, spec.Join(append(w, s.Args...)))
	}
	return out
}

// collectionFiles lists the *.yaml and *.yml files under root (at most maxScan), skipping
// hidden directories, node_modules and vendor.
func collectionFiles(root string) []string {
	var out []string
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(path); (ext == ".yaml" || ext == ".yml") && d.Type().IsRegular() {
			out = append(out, path)
			if len(out) >= maxScan {
				return filepath.SkipAll
			}
		}
		return nil
	})
	return out
}
