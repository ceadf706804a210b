package schema

import (
	"embed"
	"fmt"
	"slices"
	"strings"
)

// published holds every schema of this directory, as the `mcpspec schema` verb prints them.
//
//go:embed *.v1.json
var published embed.FS

// BaseURL is the prefix of every published schema's $id: a schema NAME is at
// BaseURL + NAME + ".v1.json".
const BaseURL = "https://mcpspec.dev/schema/"

// Names lists the published schemas by their short names ("collection", "results", …),
// sorted.
func Names() []string {
	entries, err := published.ReadDir(".")
	if err != nil { // cannot happen: the directory is embedded
		return nil
	}
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".v1.json"))
	}
	slices.Sort(names)
	return names
}

// FileName returns the file name of the published schema name ("results" → "results.v1.json").
func FileName(name string) string { return name + ".v1.json" }

// Published returns the published schema called name (see [Names]), exactly as the file in
// schema/ holds it.
func Published(name string) ([]byte, error) {
	if !slices.Contains(Names(), name) {
		return nil, fmt.Errorf("no schema %q: the published schemas are %s", name, strings.Join(Names(), ", "))
	}
	return published.ReadFile(FileName(name))
}
