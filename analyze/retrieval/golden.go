package retrieval

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpspec/mcpspec/internal/regfile"
	"gopkg.in/yaml.v3"
)

// GoldenSet is a file of queries with graded relevant tools, in YAML or JSON:
//
//	version: v1            # optional, reported
//	queries:
//	  - id: read-file
//	    query: show me the contents of notes.txt
//	    labels:
//	      - {tool: read_text_file, relevance: 2}
//	      - {tool: read_file, relevance: 1}
type GoldenSet struct {
	Version string        `json:"version,omitempty" yaml:"version"`
	Queries []GoldenQuery `json:"queries" yaml:"queries"`
}

// GoldenQuery is one query and its judgements.
type GoldenQuery struct {
	ID     string  `json:"id" yaml:"id"`
	Query  string  `json:"query" yaml:"query"`
	Labels []Label `json:"labels" yaml:"labels"`
}

// maxGoldenBytes bounds a golden set file.
const maxGoldenBytes = 4 << 20

// LoadGoldenSet reads and validates a golden set file.
func LoadGoldenSet(path string) (*GoldenSet, error) {
	f, err := regfile.OpenLimit(path, maxGoldenBytes)
	if err != nil {
		return nil, fmt.Errorf("golden set: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxGoldenBytes+1))
	if err != nil {
		return nil, fmt.Errorf("golden set %s: %w", path, err)
	}
	if len(data) > maxGoldenBytes {
		return nil, fmt.Errorf("golden set %s: larger than %d MiB", path, maxGoldenBytes>>20)
	}
	g, err := ParseGoldenSet(data)
	if err != nil {
		return nil, fmt.Errorf("golden set %s: %w", path, err)
	}
	return g, nil
}

// ParseGoldenSet decodes a golden set strictly (unknown keys are errors) and validates it:
// at least one query; ids unique and non-empty; each query non-empty with at least one tool of
// relevance ≥ 1; relevance within 0–3; a tool labelled once per query.
func ParseGoldenSet(data []byte) (*GoldenSet, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var g GoldenSet
	if err := dec.Decode(&g); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty file")
		}
		return nil, err
	}
	var problems []string
	if len(g.Queries) == 0 {
		problems = append(problems, "no queries")
	}
	ids := map[string]bool{}
	for i, q := range g.Queries {
		at := fmt.Sprintf("query %d", i+1)
		if q.ID == "" {
			problems = append(problems, at+": no id")
		} else {
			at = fmt.Sprintf("query %q", q.ID)
			if ids[q.ID] {
				problems = append(problems, at+": id used twice")
			}
			ids[q.ID] = true
		}
		if strings.TrimSpace(q.Query) == "" {
			problems = append(problems, at+": empty query")
		}
		tools := map[string]bool{}
		n := 0
		for _, l := range q.Labels {
			switch {
			case l.Tool == "":
				problems = append(problems, at+": a label without a tool")
			case tools[l.Tool]:
				problems = append(problems, fmt.Sprintf("%s: %s labelled twice", at, l.Tool))
			case l.Relevance < 0 || l.Relevance > 3:
				problems = append(problems, fmt.Sprintf("%s: %s has relevance %d, want 0–3", at, l.Tool, l.Relevance))
			}
			tools[l.Tool] = true
			if l.Relevance >= 1 {
				n++
			}
		}
		if n == 0 {
			problems = append(problems, at+": no tool with relevance ≥ 1")
		}
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "; "))
	}
	return &g, nil
}
