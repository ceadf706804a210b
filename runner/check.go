package runner

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/session"
)

// ServerCheckError is a server [CheckTools] could not connect to.
type ServerCheckError struct {
	Collection string
	Server     string
	// Err is the classified failure: its Category, Message and Hint.
	Err *ServerFailure
}

// ServerFailure describes a failed connection (the same fields a test error carries).
type ServerFailure struct {
	Category result.Category
	Message  string
	Hint     string
}

// Error implements error.
func (e *ServerCheckError) Error() string {
	return fmt.Sprintf("%s: server %q: %s", e.Collection, e.Server, e.Err.Message)
}

// CheckTools connects to every server the collection's tool calls use, lists its tools and
// reports each test calling a tool the server does not list, at the test's position, with the
// available tools as the hint. Servers are dialed as [Runner.Run] would (opts.Dial, timeouts);
// a server that cannot be reached is returned as a *[ServerCheckError] and its tests are not
// checked.
func CheckTools(ctx context.Context, col *collection.Collection, opts *Options) (collection.ErrorList, []error) {
	o := opts.withDefaults()
	r := &Runner{opts: o}
	cr := r.newColRun(col, nil, &events{r: r}, &runState{})
	used := map[string][]*collection.Test{}
	for _, t := range col.Tests {
		if _, ok := t.Step.(*collection.ToolCall); ok {
			used[t.Server] = append(used[t.Server], t)
		}
	}
	var problems collection.ErrorList
	var failures []error
	for _, name := range slices.Sorted(maps.Keys(used)) {
		p := cr.pools[name]
		if p == nil {
			continue
		}
		c, rerr := p.acquire(ctx)
		if rerr != nil {
			failures = append(failures, &ServerCheckError{Collection: col.Name, Server: name,
				Err: &ServerFailure{Category: rerr.Category, Message: rerr.Message, Hint: rerr.Hint}})
			continue
		}
		lctx, cancel := context.WithTimeout(ctx, orDefault(p.srv.Timeouts.Call, o.CallTimeout))
		tools, err := c.ListTools(lctx)
		cancel()
		p.closeAll()
		if err != nil {
			failures = append(failures, &ServerCheckError{Collection: col.Name, Server: name,
				Err: &ServerFailure{Category: session.CategoryOf(err), Message: "tools/list: " + err.Error()}})
			continue
		}
		have := map[string]bool{}
		var names []string
		for _, t := range tools {
			have[t.Name] = true
			names = append(names, t.Name)
		}
		sort.Strings(names)
		for _, t := range used[name] {
			tool := t.Step.(*collection.ToolCall).Name(nil)
			if have[tool] {
				continue
			}
			hint := "the server lists no tools"
			if len(names) > 0 {
				hint = "available tools: " + strings.Join(names, ", ")
			}
			problems = append(problems, &collection.Error{Pos: t.Pos, Hint: hint,
				Msg: fmt.Sprintf("test %q calls tool %q, which server %q does not list", t.Name, tool, name)})
		}
	}
	return problems, failures
}
