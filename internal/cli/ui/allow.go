package ui

import (
	"path/filepath"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/internal/localguard"
	"github.com/mcpspec/mcpspec/internal/regfile"
)

// maxCollections bounds the collections the UI lists.
const maxCollections = 200

// AllowedServer is one server the UI may start or connect to.
type AllowedServer = localguard.Server

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
	guard       *localguard.Servers
}

// scanProject lists the collections under dir (*.yaml and *.yml files whose top level has
// `tests:`, found by [localguard.CollectionFiles]) and the servers the UI may start
// ([localguard.LoadServers]: theirs, the lines of allowFile when not "", and testserver).
func scanProject(dir, allowFile string) (*project, error) {
	g, err := localguard.LoadServers(dir, allowFile)
	if err != nil {
		return nil, err
	}
	p := &project{dir: dir, servers: g.List(), guard: g}
	for _, path := range localguard.CollectionFiles(g.Root()) {
		if len(p.collections) >= maxCollections {
			break
		}
		rel, _ := filepath.Rel(g.Root(), path)
		if c, ok := readCollection(path, filepath.ToSlash(rel)); ok {
			p.collections = append(p.collections, c)
		}
	}
	return p, nil
}

// readCollection loads one YAML file as a collection; ok is false for a YAML file that is not
// one (no top-level tests: key).
func readCollection(path, rel string) (Collection, bool) {
	b, err := regfile.ReadFile(path, collection.DefaultMaxFileSize)
	if err != nil || !localguard.IsCollection(b) {
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
	return c, true
}

// allowed reports whether the UI may open SPEC s: a server of the project or the allowlist
// (compared word by word), or the built-in testserver with any of its flags.
func (p *project) allowed(s string) bool {
	return p.guard.Allowed("mcpspec ui", s) == nil
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
