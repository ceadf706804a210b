package race

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpspec/mcpspec/assert"
)

// ignoredValue replaces what an --ignore path selects, so the shape of the answer stays.
const ignoredValue = "<ignored>"

// Ignore removes volatile fields (timestamps, request ids) from answers before they are
// compared. It is built from JSONPath expressions whose last step names what to drop: a key
// (`$.meta.time`, `$['x-id']`), an index (`$.content[0]`), every child (`$.items[*]`) or a key
// at any depth (`$..timestamp`).
type Ignore struct {
	rules []ignoreRule
}

// ignoreRule is one path split into the containers it selects and what to drop in them.
type ignoreRule struct {
	src    string
	parent *assert.Path // nil: the key at any depth (recursive descent)
	key    string
	index  int // -1: no index
	all    bool
}

var (
	lastKey     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.*?)\.([A-Za-z_$][\w$-]*)$`) })
	lastQuoted  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.*)\[\s*(?:'([^']*)'|"([^"]*)")\s*\]$`) })
	lastIndex   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.*)\[\s*(-?\d+)\s*\]$`) })
	lastAll     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.*?)(?:\[\s*\*\s*\]|\.\*)$`) })
	lastDescent = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\$\.\.([A-Za-z_$][\w$-]*)$`) })
)

// NewIgnore compiles the paths; a path whose last step is not a key, an index or a wildcard,
// or that does not compile, is an error.
func NewIgnore(paths []string) (*Ignore, error) {
	ig := &Ignore{}
	for _, src := range paths {
		s := strings.TrimSpace(src)
		r := ignoreRule{src: s, index: -1}
		var parent string
		switch {
		case lastDescent().MatchString(s):
			r.key = lastDescent().FindStringSubmatch(s)[1]
			ig.rules = append(ig.rules, r)
			continue
		case lastAll().MatchString(s):
			m := lastAll().FindStringSubmatch(s)
			parent, r.all = m[1], true
		case lastQuoted().MatchString(s):
			m := lastQuoted().FindStringSubmatch(s)
			parent, r.key = m[1], m[2]+m[3]
		case lastIndex().MatchString(s):
			m := lastIndex().FindStringSubmatch(s)
			parent = m[1]
			r.index, _ = strconv.Atoi(m[2])
		case lastKey().MatchString(s):
			m := lastKey().FindStringSubmatch(s)
			parent, r.key = m[1], m[2]
		default:
			return nil, fmt.Errorf("--ignore %q: the path must end in a key, an index or a wildcard, e.g. $.structuredContent.time or $..timestamp", src)
		}
		if strings.HasSuffix(parent, ".") {
			// "$..x" with more before it: descend from the parent.
			return nil, fmt.Errorf("--ignore %q: recursive descent is supported as $..key only", src)
		}
		if _, err := assert.CompilePath(s); err != nil {
			return nil, fmt.Errorf("--ignore: %w", err)
		}
		p, err := assert.CompilePath(parent)
		if err != nil {
			return nil, fmt.Errorf("--ignore %q: %w", src, err)
		}
		r.parent = p
		ig.rules = append(ig.rules, r)
	}
	return ig, nil
}

// Apply replaces what the paths select in doc (decoded JSON) with "<ignored>", in place.
func (ig *Ignore) Apply(ctx context.Context, doc any) {
	if ig == nil {
		return
	}
	for _, r := range ig.rules {
		if r.parent == nil {
			dropEverywhere(doc, r.key)
			continue
		}
		v, err := r.parent.Lookup(ctx, doc)
		if err != nil {
			continue
		}
		if r.parent.Multi() {
			if list, ok := v.([]any); ok {
				for _, c := range list {
					r.drop(c)
				}
			}
			continue
		}
		r.drop(v)
	}
}

// drop replaces the rule's key, index or every child of container c.
func (r ignoreRule) drop(c any) {
	switch x := c.(type) {
	case map[string]any:
		switch {
		case r.all:
			for k := range x {
				x[k] = ignoredValue
			}
		case r.key != "":
			if _, ok := x[r.key]; ok {
				x[r.key] = ignoredValue
			}
		}
	case []any:
		switch {
		case r.all:
			for i := range x {
				x[i] = ignoredValue
			}
		case r.index >= 0 && r.index < len(x):
			x[r.index] = ignoredValue
		case r.index < 0 && r.key == "" && -r.index <= len(x):
			x[len(x)+r.index] = ignoredValue
		}
	}
}

// dropEverywhere replaces key in every object of v, at any depth.
func dropEverywhere(v any, key string) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if k == key {
				x[k] = ignoredValue
				continue
			}
			dropEverywhere(c, key)
		}
	case []any:
		for _, c := range x {
			dropEverywhere(c, key)
		}
	}
}

// maxJSONText bounds the text that expandJSONText decodes, and maxJSONTextDepth how deep
// JSON inside JSON text is followed.
const (
	maxJSONText      = 1 << 20
	maxJSONTextDepth = 4
)

// expandJSONText replaces, at any depth of v, every string that holds a JSON object or array
// with the decoded value, and returns v. Many servers answer with their data serialized in a
// text block (json.dumps, JSON.stringify), often next to a timestamp or an id: compared as one
// string, the whole text varies by design and would hide a field that diverges only under
// concurrency. Decoded, each field is a leaf of its own (the text's path, then the field's),
// and --ignore paths reach into it.
func expandJSONText(v any, depth int) any {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			x[k] = expandJSONText(c, depth)
		}
	case []any:
		for i, c := range x {
			x[i] = expandJSONText(c, depth)
		}
	case string:
		s := strings.TrimSpace(x)
		if depth >= maxJSONTextDepth || len(s) < 2 || len(s) > maxJSONText || !(s[0] == '{' && s[len(s)-1] == '}' || s[0] == '[' && s[len(s)-1] == ']') {
			return v
		}
		d, err := assert.DecodeJSON([]byte(s))
		if err != nil {
			return v
		}
		return expandJSONText(d, depth+1)
	}
	return v
}

// leaves is a flattened answer: every scalar (and empty container) by its JSONPath, and every
// array's length under "<path>#len". A scalar longer than maxLeaf is kept as digests (see
// digestLeaf), so a large answer costs little to keep.
type leaves map[string]string

// flatten records v's leaves under path; parents maps each path to its parent's.
func flatten(v any, path string, out leaves, parents map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			out[path] = "{}"
			return
		}
		for k, c := range x {
			p := path + keyStep(k)
			parents[p] = path
			flatten(c, p, out, parents)
		}
	case []any:
		out[path+"#len"] = strconv.Itoa(len(x))
		parents[path+"#len"] = path
		for i, c := range x {
			p := fmt.Sprintf("%s[%d]", path, i)
			parents[p] = path
			flatten(c, p, out, parents)
		}
	default:
		v := assert.CanonicalJSON(x)
		if len(v) > maxLeaf {
			v = digestLeaf(v)
		}
		out[path] = v
	}
}

var identifier = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// keyStep renders an object key as a JSONPath step.
func keyStep(k string) string {
	if identifier().MatchString(k) {
		return "." + k
	}
	return "[" + strconv.Quote(k) + "]"
}

// differences lists the paths where a and b differ, sorted.
func differences(a, b leaves) []string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// excused reports whether a difference at path p is explained by a volatile path: p itself,
// an ancestor, or the length of an array above it.
func excused(p string, volatile map[string]bool, parents map[string]string) bool {
	for q, n := p, 0; q != "" && n < 1000; q, n = parents[q], n+1 {
		if volatile[q] || volatile[q+"#len"] {
			return true
		}
		if q == "$" {
			break
		}
	}
	return false
}

// volatileToken matches what varies by design inside a text: an ISO 8601 date and time, a time
// of day, a UUID, a long hex id, epoch seconds or milliseconds, an elapsed time in ms, µs or ns.
var volatileToken = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?` +
	`|\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\b|\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b` +
	`|\b[0-9a-fA-F]{16,}\b|\b1\d{9}(?:\d{3})?\b|\b\d+(?:\.\d+)?\s?(?:ns|µs|us|ms)\b`)

// maskTokens replaces the volatile tokens of a string leaf (canonical JSON) with a mark; any
// other leaf is returned as is.
func maskTokens(leaf string) string {
	if _, masked, _, ok := digestParts(leaf); ok {
		return "\x00masked:" + masked
	}
	if !strings.HasPrefix(leaf, `"`) {
		return leaf
	}
	return volatileToken.ReplaceAllString(leaf, "<volatile>")
}

// maskedAlike reports whether the leaf at p is a string in every answer, equal in all of them
// once its volatile tokens are masked, and returns that masked form.
func maskedAlike(answers []*answer, p string) (string, bool) {
	var m string
	for i, a := range answers {
		v, ok := a.leaves[p]
		if _, _, _, digested := digestParts(v); !ok || !strings.HasPrefix(v, `"`) && !digested {
			return "", false
		}
		if mv := maskTokens(v); i == 0 {
			m = mv
		} else if mv != m {
			return "", false
		}
	}
	return m, len(answers) > 0
}
