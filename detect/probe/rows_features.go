package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/session"
)

// maxPages bounds the pages the pagination row follows.
const maxPages = 100

func featureRows() []Row {
	legacy := inEra(session.EraLegacy)
	return []Row{
		{ID: "ping", Title: "ping is answered with an empty result", Applies: legacy,
			Spec: spec1125 + "Basic › Utilities › Ping", Run: ping},
		{ID: "capabilities.declared", Title: "each declared feature's list method works",
			Spec: spec1125 + "Basic › Lifecycle › Capability Negotiation", Run: declared},
		{ID: "capabilities.undeclared", Title: "undeclared features are not served",
			Spec: spec1125 + "Basic › Lifecycle › Capability Negotiation (only negotiated capabilities are used)", Run: undeclared},
		{ID: "tools.list", Title: "every tool has a name and an object inputSchema",
			Spec: spec1125 + "Server › Tools › Listing Tools; Tool", Run: toolsList},
		{ID: "resources.list", Title: "every resource has a uri and a name",
			Spec: spec1125 + "Server › Resources › Listing Resources; Resource", Run: resourcesList},
		{ID: "prompts.list", Title: "every prompt has a name",
			Spec: spec1125 + "Server › Prompts › Listing Prompts; Prompt", Run: promptsList},
		{ID: "logging.set-level", Title: "logging/setLevel is answered with an empty result", Applies: legacy,
			Spec: spec1125 + "Server › Utilities › Logging › Setting Log Level", Run: setLevel},
		{ID: "completion.complete", Title: "completion/complete answers values for a prompt argument",
			Spec: spec1125 + "Server › Utilities › Completion", Run: complete},
		{ID: "resources.subscribe", Title: "resources/subscribe and unsubscribe are answered", Applies: legacy,
			Spec: spec1125 + "Server › Resources › Subscriptions", Run: subscribe},
		{ID: "pagination.walk", Title: "list cursors lead to the last page without repeating",
			Spec: spec1125 + "Server › Utilities › Pagination", Run: walk},
		{ID: "pagination.invalid-cursor", Title: "an invalid cursor gets -32602",
			Spec: spec1125 + "Server › Utilities › Pagination › Error Handling", Run: invalidCursor},
	}
}

// ping sends ping and expects {}.
func ping(ctx context.Context, e *Env) Outcome {
	a := e.call(ctx, "ping", nil, 0)
	if !a.ok() {
		return Outcome{Fail, "ping: " + a.describe()}
	}
	if !emptyResult(a.result) {
		return Outcome{Fail, "ping answered " + excerptN(a.result, 120) + "; the result must be empty"}
	}
	return Outcome{Pass, "{}"}
}

// emptyResult reports whether a result is an object with no members but _meta (and, in the
// stateless era, resultType).
func emptyResult(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	delete(m, "_meta")
	delete(m, "resultType")
	return len(m) == 0
}

// features maps a server capability to its list method and member.
var features = []struct{ capability, method, member string }{
	{"tools", "tools/list", "tools"},
	{"resources", "resources/list", "resources"},
	{"prompts", "prompts/list", "prompts"},
}

// declared lists each declared feature.
func declared(ctx context.Context, e *Env) Outcome {
	var done, faults []string
	for _, f := range features {
		if !e.hasCap(f.capability) {
			continue
		}
		if _, _, err := e.list(ctx, f.method, f.member, 1); err != "" {
			faults = append(faults, err)
			continue
		}
		done = append(done, f.method)
	}
	switch {
	case len(faults) > 0:
		return Outcome{Fail, strings.Join(faults, "; ")}
	case len(done) == 0:
		return Outcome{NotApplicable, "the server declares none of tools, resources and prompts"}
	}
	return Outcome{Pass, "answered: " + strings.Join(done, ", ")}
}

// undeclared calls the list method of each feature the server did not declare.
func undeclared(ctx context.Context, e *Env) Outcome {
	var checked, served []string
	for _, f := range features {
		if e.hasCap(f.capability) {
			continue
		}
		checked = append(checked, f.method)
		if a := e.call(ctx, f.method, e.params(""), 0); a.ok() {
			served = append(served, f.method)
		}
	}
	switch {
	case len(checked) == 0:
		return Outcome{NotApplicable, "the server declares tools, resources and prompts"}
	case len(served) > 0:
		return Outcome{Warn, strings.Join(served, ", ") + " answered without the capability declared: clients will not look for it"}
	}
	return Outcome{Pass, "refused: " + strings.Join(checked, ", ")}
}

// list walks a list method's pages (at most max; 0 means maxPages) and returns the items and
// the number of pages, or why it failed.
func (e *Env) list(ctx context.Context, method, member string, max int) ([]json.RawMessage, int, string) {
	if max <= 0 {
		max = maxPages
	}
	var (
		items  []json.RawMessage
		cursor *string
		seen   = map[string]bool{}
	)
	for page := 1; ; page++ {
		members := ""
		if cursor != nil {
			members = `"cursor":` + strconv.Quote(*cursor)
		}
		a := e.call(ctx, method, e.params(members), 0)
		if !a.ok() {
			return items, page, fmt.Sprintf("%s (page %d): %s", method, page, a.describe())
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(a.result, &m); err != nil {
			return items, page, fmt.Sprintf("%s: the result does not decode: %v", method, err)
		}
		var got []json.RawMessage
		if err := json.Unmarshal(m[member], &got); err != nil || m[member] == nil {
			return items, page, fmt.Sprintf("%s: %s is not an array", method, member)
		}
		items = append(items, got...)
		next, ok := m["nextCursor"]
		if !ok || string(next) == "null" {
			return items, page, ""
		}
		var c string
		if json.Unmarshal(next, &c) != nil {
			return items, page, fmt.Sprintf("%s: nextCursor %s is not a string", method, excerptN(next, 60))
		}
		if seen[c] {
			return items, page, fmt.Sprintf("%s: nextCursor %q came back on page %d: the pages loop", method, c, page)
		}
		if page >= max {
			return items, page, ""
		}
		seen[c] = true
		cursor = &c
	}
}

// toolsList checks every tool's definition.
func toolsList(ctx context.Context, e *Env) Outcome {
	return withCap(e, "tools", func() Outcome {
		items, _, err := e.list(ctx, "tools/list", "tools", 0)
		if err != "" {
			return Outcome{Fail, err}
		}
		var faults, notes []string
		names := map[string]bool{}
		for i, raw := range items {
			var t struct {
				Name         *string         `json:"name"`
				Description  *string         `json:"description"`
				InputSchema  json.RawMessage `json:"inputSchema"`
				OutputSchema json.RawMessage `json:"outputSchema"`
			}
			if json.Unmarshal(raw, &t) != nil {
				faults = append(faults, fmt.Sprintf("tool %d is not an object", i))
				continue
			}
			name := fmt.Sprintf("tool %d", i)
			switch {
			case t.Name == nil || *t.Name == "":
				faults = append(faults, name+" has no name")
			case names[*t.Name]:
				faults = append(faults, fmt.Sprintf("two tools are named %q", *t.Name))
			default:
				names[*t.Name] = true
				name = strconv.Quote(*t.Name)
			}
			if !schemaObject(t.InputSchema) {
				faults = append(faults, name+`'s inputSchema is not an object schema (type "object")`)
			}
			if t.OutputSchema != nil && !schemaObject(t.OutputSchema) {
				faults = append(faults, name+`'s outputSchema is not an object schema (type "object")`)
			}
			if t.Description == nil || *t.Description == "" {
				notes = append(notes, name+" has no description")
			}
		}
		switch {
		case len(faults) > 0:
			return Outcome{Fail, strings.Join(faults, "; ")}
		case len(notes) > 0:
			return Outcome{Warn, strings.Join(notes, "; ") + " (optional in the schema, but a model chooses tools by it)"}
		}
		return Outcome{Pass, textfmt.Plural(len(items), "tool")}
	})
}

// schemaObject reports whether raw is a JSON Schema object whose type is "object".
func schemaObject(raw json.RawMessage) bool {
	var s struct {
		Type json.RawMessage `json:"type"`
	}
	if !isObject(raw) || json.Unmarshal(raw, &s) != nil {
		return false
	}
	return string(s.Type) == `"object"`
}

// resourcesList checks every resource.
func resourcesList(ctx context.Context, e *Env) Outcome {
	return withCap(e, "resources", func() Outcome {
		items, _, err := e.list(ctx, "resources/list", "resources", 0)
		if err != "" {
			return Outcome{Fail, err}
		}
		var faults []string
		for i, raw := range items {
			var r struct {
				URI  *string `json:"uri"`
				Name *string `json:"name"`
			}
			if json.Unmarshal(raw, &r) != nil {
				faults = append(faults, fmt.Sprintf("resource %d is not an object", i))
				continue
			}
			if r.URI == nil || *r.URI == "" {
				faults = append(faults, fmt.Sprintf("resource %d has no uri", i))
			}
			if r.Name == nil || *r.Name == "" {
				faults = append(faults, fmt.Sprintf("resource %d has no name", i))
			}
		}
		if len(faults) > 0 {
			return Outcome{Fail, strings.Join(faults, "; ")}
		}
		return Outcome{Pass, textfmt.Plural(len(items), "resource")}
	})
}

// promptsList checks every prompt.
func promptsList(ctx context.Context, e *Env) Outcome {
	return withCap(e, "prompts", func() Outcome {
		items, _, err := e.list(ctx, "prompts/list", "prompts", 0)
		if err != "" {
			return Outcome{Fail, err}
		}
		var faults, notes []string
		for i, raw := range items {
			var p struct {
				Name        *string `json:"name"`
				Description *string `json:"description"`
				Arguments   []struct {
					Name *string `json:"name"`
				} `json:"arguments"`
			}
			if json.Unmarshal(raw, &p) != nil {
				faults = append(faults, fmt.Sprintf("prompt %d is not an object", i))
				continue
			}
			if p.Name == nil || *p.Name == "" {
				faults = append(faults, fmt.Sprintf("prompt %d has no name", i))
				continue
			}
			for j, a := range p.Arguments {
				if a.Name == nil || *a.Name == "" {
					faults = append(faults, fmt.Sprintf("prompt %q: argument %d has no name", *p.Name, j))
				}
			}
			if p.Description == nil || *p.Description == "" {
				notes = append(notes, fmt.Sprintf("prompt %q has no description", *p.Name))
			}
		}
		switch {
		case len(faults) > 0:
			return Outcome{Fail, strings.Join(faults, "; ")}
		case len(notes) > 0:
			return Outcome{Warn, strings.Join(notes, "; ") + " (optional in the schema, but clients show it)"}
		}
		return Outcome{Pass, textfmt.Plural(len(items), "prompt")}
	})
}

// setLevel sends logging/setLevel info.
func setLevel(ctx context.Context, e *Env) Outcome {
	return withCap(e, "logging", func() Outcome {
		a := e.call(ctx, "logging/setLevel", e.params(`"level":"info"`), 0)
		switch {
		case !a.ok():
			return Outcome{Fail, "logging/setLevel: " + a.describe() + " (the server declared logging)"}
		case !emptyResult(a.result):
			return Outcome{Fail, "logging/setLevel answered " + excerptN(a.result, 120) + "; the result must be empty"}
		}
		return Outcome{Pass, "{}"}
	})
}

// templateVar finds the first variable of an RFC 6570 URI template.
var templateVar = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{[+#./;?&]?([A-Za-z0-9_]+)`) })

// complete asks completion/complete for the first prompt argument (or resource template
// variable) the server lists.
func complete(ctx context.Context, e *Env) Outcome {
	return withCap(e, "completions", func() Outcome {
		ref, arg := e.completionTarget(ctx)
		if ref == "" {
			return Outcome{NotApplicable, "the server lists no prompt with arguments and no resource template with a variable to complete"}
		}
		a := e.call(ctx, "completion/complete", e.params(`"ref":`+ref+`,"argument":{"name":`+strconv.Quote(arg)+`,"value":""}`), 0)
		if !a.ok() {
			return Outcome{Fail, "completion/complete: " + a.describe() + " (the server declared completions)"}
		}
		var r struct {
			Completion *struct {
				Values []string `json:"values"`
			} `json:"completion"`
		}
		if err := json.Unmarshal(a.result, &r); err != nil || r.Completion == nil || r.Completion.Values == nil {
			return Outcome{Fail, "the result has no completion.values array of strings: " + excerptN(a.result, 160)}
		}
		return Outcome{Pass, fmt.Sprintf("%s for %s argument %q", textfmt.Plural(len(r.Completion.Values), "value"), ref, arg)}
	})
}

// completionTarget returns a ref and an argument name to complete, or "".
func (e *Env) completionTarget(ctx context.Context) (ref, arg string) {
	if e.hasCap("prompts") {
		items, _, _ := e.list(ctx, "prompts/list", "prompts", 0)
		for _, raw := range items {
			var p session.Prompt
			if json.Unmarshal(raw, &p) == nil && p.Name != "" && len(p.Arguments) > 0 && p.Arguments[0].Name != "" {
				return `{"type":"ref/prompt","name":` + strconv.Quote(p.Name) + `}`, p.Arguments[0].Name
			}
		}
	}
	if e.hasCap("resources") {
		items, _, _ := e.list(ctx, "resources/templates/list", "resourceTemplates", 0)
		for _, raw := range items {
			var t session.ResourceTemplate
			if json.Unmarshal(raw, &t) != nil {
				continue
			}
			if m := templateVar().FindStringSubmatch(t.URITemplate); m != nil {
				return `{"type":"ref/resource","uri":` + strconv.Quote(t.URITemplate) + `}`, m[1]
			}
		}
	}
	return "", ""
}

// subscribe subscribes to the first listed resource, then unsubscribes.
func subscribe(ctx context.Context, e *Env) Outcome {
	if !e.capField("resources", "subscribe") {
		return Outcome{NotApplicable, "the server does not declare resources.subscribe"}
	}
	items, _, err := e.list(ctx, "resources/list", "resources", 1)
	if err != "" {
		return Outcome{Fail, err}
	}
	var uri string
	for _, raw := range items {
		var r session.Resource
		if json.Unmarshal(raw, &r) == nil && r.URI != "" {
			uri = r.URI
			break
		}
	}
	if uri == "" {
		return Outcome{NotApplicable, "the server lists no resource to subscribe to"}
	}
	a := e.call(ctx, "resources/subscribe", e.params(`"uri":`+strconv.Quote(uri)), 0)
	if !a.ok() {
		return Outcome{Fail, "resources/subscribe " + uri + ": " + a.describe() + " (the server declared resources.subscribe)"}
	}
	u := e.call(ctx, "resources/unsubscribe", e.params(`"uri":`+strconv.Quote(uri)), 0)
	if !u.ok() {
		return Outcome{Warn, "subscribed, but resources/unsubscribe " + uri + ": " + u.describe()}
	}
	return Outcome{Pass, "subscribed to and unsubscribed from " + uri}
}

// walk follows the cursors of every declared list.
func walk(ctx context.Context, e *Env) Outcome {
	var done []string
	for _, f := range features {
		if !e.hasCap(f.capability) {
			continue
		}
		items, pages, err := e.list(ctx, f.method, f.member, 0)
		if err != "" {
			return Outcome{Fail, err}
		}
		done = append(done, fmt.Sprintf("%s: %s in %s", f.method, textfmt.Plural(len(items), "item"), textfmt.Plural(pages, "page")))
	}
	if len(done) == 0 {
		return Outcome{NotApplicable, "the server declares none of tools, resources and prompts"}
	}
	return Outcome{Pass, strings.Join(done, "; ")}
}

// invalidCursor sends a cursor the server never issued.
func invalidCursor(ctx context.Context, e *Env) Outcome {
	for _, f := range features {
		if !e.hasCap(f.capability) {
			continue
		}
		a := e.call(ctx, f.method, e.params(`"cursor":"mcpspec-probe-invalid-cursor"`), 0)
		switch {
		case a.code() == -32602:
			return Outcome{Pass, f.method + ": " + a.describe()}
		case a.ok():
			return Outcome{Warn, f.method + " served an invalid cursor (" + a.describe() + "); invalid cursors should get -32602"}
		case a.rpcError():
			return Outcome{Warn, f.method + ": " + a.describe() + "; the code for an invalid cursor is -32602"}
		}
		return Outcome{Fail, f.method + ": " + a.describe()}
	}
	return Outcome{NotApplicable, "the server declares none of tools, resources and prompts"}
}
