package replay

import (
	"fmt"
	"strconv"
	"strings"
)

// A Path is a compiled ignore path: a small JSONPath subset. "$" is the whole message;
// ".name" or "['name']" a member; "[N]" an element; ".*" or "[*]" any member or element;
// "..name" the member name at any depth below.
type Path struct {
	text string
	segs []seg
}

type seg struct {
	name string // a member name or "[N]"; "*" any
	deep bool   // preceded by "..": matches after any number of segments
}

// String is the path as written.
func (p Path) String() string { return p.text }

// ParsePath compiles a path; an unsupported one is an error that says what was expected.
func ParsePath(s string) (Path, error) {
	p := Path{text: s}
	rest, ok := strings.CutPrefix(s, "$")
	if !ok {
		return p, fmt.Errorf("path %q must start with $ (e.g. $.result._meta)", s)
	}
	for rest != "" {
		deep := false
		switch {
		case strings.HasPrefix(rest, ".."):
			deep, rest = true, rest[2:]
		case strings.HasPrefix(rest, "."):
			rest = rest[1:]
		case strings.HasPrefix(rest, "["):
		default:
			return p, fmt.Errorf("path %q: expected . or [ at %q", s, rest)
		}
		if strings.HasPrefix(rest, "[") {
			end := strings.Index(rest, "]")
			if end < 0 {
				return p, fmt.Errorf("path %q: unclosed [", s)
			}
			in := rest[1:end]
			rest = rest[end+1:]
			switch {
			case in == "*":
				p.segs = append(p.segs, seg{name: "*", deep: deep})
			case len(in) >= 2 && (in[0] == '\'' || in[0] == '"') && in[len(in)-1] == in[0]:
				p.segs = append(p.segs, seg{name: in[1 : len(in)-1], deep: deep})
			default:
				n, err := strconv.Atoi(in)
				if err != nil || n < 0 {
					return p, fmt.Errorf("path %q: [%s] is neither an index, * nor a quoted name", s, in)
				}
				p.segs = append(p.segs, seg{name: "[" + in + "]", deep: deep})
			}
			continue
		}
		end := strings.IndexAny(rest, ".[")
		if end < 0 {
			end = len(rest)
		}
		name := rest[:end]
		if name == "" {
			return p, fmt.Errorf("path %q: empty member name", s)
		}
		p.segs = append(p.segs, seg{name: name, deep: deep})
		rest = rest[end:]
	}
	return p, nil
}

// matches reports whether p names the node at path (segments as built by the diff) or one of
// its ancestors.
func (p Path) matches(path []string) bool { return match(p.segs, path) }

func match(pat []seg, path []string) bool {
	if len(pat) == 0 {
		return true // an ancestor of path was named: all below is ignored
	}
	if len(path) == 0 {
		return false
	}
	s := pat[0]
	if s.deep {
		for i := range path {
			if segMatch(s.name, path[i]) && match(pat[1:], path[i+1:]) {
				return true
			}
		}
		return false
	}
	return segMatch(s.name, path[0]) && match(pat[1:], path[1:])
}

func segMatch(pat, name string) bool { return pat == "*" || pat == name }

// render writes path segments as a JSONPath: $.result.content[0].text.
func render(path []string) string {
	var b strings.Builder
	b.WriteString("$")
	for _, s := range path {
		switch {
		case strings.HasPrefix(s, "["):
			b.WriteString(s)
		case plainName(s):
			b.WriteString("." + s)
		default:
			b.WriteString("['" + strings.ReplaceAll(s, "'", `\'`) + "']")
		}
	}
	return b.String()
}

func plainName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
