package runner

import (
	"context"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/session"
)

// advertised is what a server listed, in its order; a nil list means the server does not
// offer the kind or its listing failed (unknown, not zero).
type advertised struct {
	tools, prompts, resources, templates []string
	known                                bool // the first session recorded the lists
}

// exercised is what a collection sent requests for, by kind.
type exercised struct {
	tools, prompts, uris map[string]bool
}

// listAdvertised lists the prompts, resources and resource templates of a server that
// declares them (tools are listed by the caller).
func listAdvertised(ctx context.Context, s *session.Session, timeout time.Duration) advertised {
	a := advertised{known: true}
	var caps map[string]json.RawMessage
	_ = json.Unmarshal(s.ServerCapabilities(), &caps)
	has := func(k string) bool { v, ok := caps[k]; return ok && string(v) != "null" }
	lctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if has("prompts") {
		if l, err := s.ListPrompts(lctx); err == nil {
			a.prompts = make([]string, 0, len(l))
			for _, p := range l {
				a.prompts = append(a.prompts, p.Name)
			}
		}
	}
	if has("resources") {
		if l, err := s.ListResources(lctx); err == nil {
			a.resources = make([]string, 0, len(l))
			for _, r := range l {
				a.resources = append(a.resources, r.URI)
			}
		}
		if l, err := s.ListResourceTemplates(lctx); err == nil {
			a.templates = make([]string, 0, len(l))
			for _, r := range l {
				a.templates = append(a.templates, r.URITemplate)
			}
		}
	}
	return a
}

// exercise records that a request of kind for target was sent.
func (p *pool) exercise(kind, target string) {
	if target == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	set := func(m *map[string]bool) {
		if *m == nil {
			*m = map[string]bool{}
		}
		(*m)[target] = true
	}
	switch kind {
	case "tool":
		set(&p.exercised.tools)
	case "prompt":
		set(&p.exercised.prompts)
	case "read":
		set(&p.exercised.uris)
	}
}

// exerciseStep records what a sent step exercised: a tools/call, prompts/get or resources/read,
// the prompt or resource a completion/complete refers to, also when written as a raw request.
func (p *pool) exerciseStep(st collection.Step, method string, request any) {
	switch st := st.(type) {
	case *collection.ToolCall:
		p.exercise("tool", st.Target())
		return
	case *collection.Frame:
		// A raw frame names what it calls in its params, if it is JSON at all.
		var f struct {
			Params map[string]any `json:"params"`
		}
		_ = json.Unmarshal(st.Data, &f)
		request = f.Params
	}
	m, _ := request.(map[string]any)
	str := func(k string) string { v, _ := m[k].(string); return v }
	switch method {
	case "tools/call":
		p.exercise("tool", str("name"))
	case "prompts/get":
		p.exercise("prompt", str("name"))
	case "resources/read":
		p.exercise("read", str("uri"))
	case "completion/complete":
		// Completing an argument exercises the prompt or resource (template) it refers to.
		ref, _ := m["ref"].(map[string]any)
		refStr := func(k string) string { v, _ := ref[k].(string); return v }
		switch refStr("type") {
		case "ref/prompt":
			p.exercise("prompt", refStr("name"))
		case "ref/resource":
			p.exercise("read", refStr("uri"))
		}
	}
}

// coverage compares what the collection exercised on each server with what it advertised.
func (cr *colRun) coverage() *result.Coverage {
	var cov result.Coverage
	for _, name := range slices.Sorted(maps.Keys(cr.pools)) {
		p := cr.pools[name]
		p.mu.Lock()
		l, e := p.listed, p.exercised
		p.mu.Unlock()
		if !l.known {
			continue
		}
		sc := result.ServerCoverage{Server: name}
		if l.tools != nil {
			sc.Tools = kindCoverage(l.tools, func(n string) bool { return e.tools[n] })
		}
		if l.prompts != nil {
			sc.Prompts = kindCoverage(l.prompts, func(n string) bool { return e.prompts[n] })
		}
		if l.resources != nil || l.templates != nil {
			items := append(slices.Clone(l.resources), l.templates...)
			static := map[string]bool{}
			for _, r := range l.resources {
				static[r] = true
			}
			sc.Resources = kindCoverage(items, func(n string) bool {
				if static[n] {
					return e.uris[n]
				}
				re := templatePattern(n)
				for u := range e.uris {
					if re != nil && re.MatchString(u) {
						return true
					}
				}
				return false
			})
		}
		cov.Servers = append(cov.Servers, sc)
	}
	if len(cov.Servers) == 0 {
		return nil
	}
	return &cov
}

// kindCoverage splits items into exercised and missed, keeping their order.
func kindCoverage(items []string, done func(string) bool) *result.KindCoverage {
	k := &result.KindCoverage{Advertised: len(items), Exercised: []string{}, Missed: []string{}}
	for _, it := range items {
		if done(it) {
			k.Exercised = append(k.Exercised, it)
		} else {
			k.Missed = append(k.Missed, it)
		}
	}
	return k
}

var templateExpr = regexp.MustCompile(`\{[^}]*\}`)

// templatePattern turns an RFC 6570 URI template into a regular expression matching the URIs
// it expands to (every expression matches any run of characters): a read exercises the
// template when its URI matches.
func templatePattern(t string) *regexp.Regexp {
	parts := templateExpr.Split(t, -1)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	re, err := regexp.Compile("^" + strings.Join(parts, ".*") + "$")
	if err != nil {
		return nil
	}
	return re
}
