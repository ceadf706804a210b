package mcpserve

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpspec/mcpspec/internal/localguard"
)

// Policy says which servers a tool may start and which paths it may read.
type Policy struct {
	// root is the working directory, symbolic links resolved.
	root string
	// servers decides which servers may be started.
	servers *localguard.Servers
}

// RefusedError is a server or path a [Policy] does not allow; its message says how to allow it.
type RefusedError = localguard.RefusedError

// LoadPolicy builds the policy of the working directory dir: the servers of
// [localguard.LoadServers] (its collections and the lines of allowFile, "" for none). An
// unreadable allowlist is an error naming its file and line.
func LoadPolicy(dir, allowFile string) (*Policy, error) {
	s, err := localguard.LoadServers(dir, allowFile)
	if err != nil {
		return nil, err
	}
	return &Policy{root: s.Root(), servers: s}, nil
}

// Root is the working directory the policy confines paths to.
func (p *Policy) Root() string { return p.root }

// Allowed lists the allowed SPECs (besides testserver), sorted.
func (p *Policy) Allowed() []string {
	var out []string
	for _, s := range p.servers.List() {
		if s.Source != "built-in" {
			c, _ := localguard.Canonical(s.Spec)
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// Server checks that the SPEC s may be started: "testserver" (with any of its flags), a
// server named in a collection under the working directory, or a line of the allowlist.
func (p *Policy) Server(s string) error {
	return p.servers.Allowed("mcpspec mcp", s)
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
