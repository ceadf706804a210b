package race

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mcpspec/mcpspec/session"
)

// CrossTalkVerdict is what the cross-talk form concluded; its JSON form is the string.
type CrossTalkVerdict string

// Verdicts of the cross-talk form.
const (
	// CrossTalkLeak: a concurrent answer carried another call's marker, and no answer one
	// at a time did.
	CrossTalkLeak CrossTalkVerdict = "race"
	// CrossTalkShared: answers carried other calls' markers one at a time too (state shared
	// across calls by design).
	CrossTalkShared CrossTalkVerdict = "shared state by design"
	// CrossTalkIsolated: every answer carried only its own marker, or none.
	CrossTalkIsolated CrossTalkVerdict = "isolated"
	// CrossTalkSkipped: no free-form string argument could carry a marker.
	CrossTalkSkipped CrossTalkVerdict = "skipped"
)

// CrossTalk is what the cross-talk form found.
type CrossTalk struct {
	// Fields are the arguments that carried each call's marker (every free-form string), as
	// JSONPaths into the arguments.
	Fields  []string         `json:"fields,omitempty"`
	Verdict CrossTalkVerdict `json:"verdict"`
	Reason  string           `json:"reason"`
	// Echoes counts the concurrent answers that carried their own marker (the tool echoes
	// the argument, so a leak would show).
	Echoes int `json:"echoes"`
	// Leaks are the answers that carried another call's marker.
	Leaks []Leak `json:"leaks,omitempty"`
}

// Leak is one answer carrying another call's argument.
type Leak struct {
	// Call is the call whose answer it was; Carries the calls whose markers it holds.
	Call    int    `json:"call"`
	Carries []int  `json:"carries"`
	Excerpt string `json:"excerpt"`
}

// crossTalk calls the tool with a distinct marker in one free-form string argument per call:
// first one at a time (does the tool keep earlier calls' arguments by design?), then all at once.
func (k *checker) crossTalk(ctx context.Context, tool session.Tool, args map[string]any) *CrossTalk {
	ct := &CrossTalk{}
	fields := freeStrings(args, schemaOf(tool.InputSchema))
	if len(fields) == 0 {
		ct.Verdict, ct.Reason = CrossTalkSkipped, "no free-form string argument to carry a marker"
		return ct
	}
	for _, f := range fields {
		ct.Fields = append(ct.Fields, f.path)
	}
	what := strings.Join(ct.Fields, ", ")
	nonce := newNonce()
	marker := func(i int) string { return fmt.Sprintf("mcpspec-xt-%s-%04d", nonce, i) }
	tagged := func(i int) map[string]any {
		out := deepCopy(args).(map[string]any)
		for _, f := range fields {
			f.set(out, marker(i))
		}
		return out
	}
	found := regexp.MustCompile(`mcpspec-xt-` + nonce + `-(\d{4})`)
	// keep notes the markers an answer carries, and an excerpt, then drops the answer.
	keep := func(c *call) {
		for _, m := range found.FindAllSubmatch(c.o.Result, -1) {
			n, _ := strconv.Atoi(string(m[1]))
			if !slices.Contains(c.marks, n) {
				c.marks = append(c.marks, n)
			}
		}
		sort.Ints(c.marks)
		if len(c.marks) > 0 {
			c.excerpt = excerpt(c.o.Result, 300)
		}
		c.o.Result = nil
	}

	seqN := k.o.Sequential * 2
	for i := range seqN {
		if ctx.Err() != nil {
			return nil
		}
		out := k.sequential(ctx, tagged(i), 1, keep)
		if len(out) == 0 {
			return nil
		}
		for _, j := range out[0].marks {
			if j != i {
				ct.Verdict = CrossTalkShared
				ct.Reason = fmt.Sprintf("one call at a time, call %d's answer already carries call %d's %s: the tool keeps earlier calls' arguments, so concurrent calls cannot be told apart", i, j, what)
				return ct
			}
		}
	}
	con := k.burst(ctx, func(i int) map[string]any { return tagged(seqN + i) }, keep)
	for _, c := range con {
		own := seqN + c.o.Index
		var others []int
		for _, j := range c.marks {
			if j == own {
				ct.Echoes++
				continue
			}
			others = append(others, j)
		}
		if len(others) > 0 {
			ct.Leaks = append(ct.Leaks, Leak{Call: own, Carries: others, Excerpt: c.excerpt})
		}
	}
	switch {
	case len(ct.Leaks) > 0:
		l := ct.Leaks[0]
		ct.Verdict = CrossTalkLeak
		ct.Reason = fmt.Sprintf("%d of %d concurrent answers carry another call's %s (call %d's answer holds the marker of call %s), while calls made one at a time never did",
			len(ct.Leaks), len(con), what, l.Call, ints(l.Carries))
	case ct.Echoes == 0:
		ct.Verdict = CrossTalkIsolated
		ct.Reason = fmt.Sprintf("no answer carried a marker: the tool does not echo %s, so a leak could not show", what)
	default:
		ct.Verdict = CrossTalkIsolated
		ct.Reason = fmt.Sprintf("each of %d concurrent answers carried only its own %s", ct.Echoes, what)
	}
	return ct
}

// stringField is a string in the arguments, by its path.
type stringField struct {
	path  string
	steps []any // string keys and int indexes
	value string
}

// set sets the field in args (a copy of the arguments it was found in) to its value suffixed
// by marker.
func (f stringField) set(args map[string]any, marker string) {
	var cur any = args
	for i, st := range f.steps {
		last := i == len(f.steps)-1
		switch k := st.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				return
			}
			if last {
				m[k] = join(f.value, marker)
				return
			}
			cur = m[k]
		case int:
			a, ok := cur.([]any)
			if !ok || k >= len(a) {
				return
			}
			if last {
				a[k] = join(f.value, marker)
				return
			}
			cur = a[k]
		}
	}
}

func join(v, marker string) string {
	if v == "" {
		return marker
	}
	return v + "-" + marker
}

// freeStrings finds every string in args (keys in order, depth first) whose schema does not
// constrain it (no enum, const, format or pattern).
func freeStrings(args map[string]any, schema map[string]any) []stringField {
	var out []stringField
	var walk func(v any, sch map[string]any, path string, steps []any)
	walk = func(v any, sch map[string]any, path string, steps []any) {
		switch x := v.(type) {
		case string:
			for _, k := range []string{"enum", "const", "format", "pattern"} {
				if _, ok := sch[k]; ok {
					return
				}
			}
			out = append(out, stringField{path: path, steps: slices.Clone(steps), value: x})
		case map[string]any:
			props, _ := sch["properties"].(map[string]any)
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				ps, _ := props[k].(map[string]any)
				walk(x[k], ps, path+keyStep(k), append(steps, k))
			}
		case []any:
			items, _ := sch["items"].(map[string]any)
			for i, c := range x {
				walk(c, items, fmt.Sprintf("%s[%d]", path, i), append(steps, i))
			}
		}
	}
	walk(args, schema, "$", nil)
	return out
}

func schemaOf(raw json.RawMessage) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, c := range x {
			out[k] = deepCopy(c)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = deepCopy(c)
		}
		return out
	}
	return v
}

// excerpt cuts raw JSON to n bytes.
func excerpt(raw []byte, n int) string {
	s := strings.TrimSpace(string(raw))
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// ints renders call numbers: "3", "3 and 7", "3, 7 and 9".
func ints(n []int) string {
	s := make([]string, len(n))
	for i, x := range n {
		s[i] = strconv.Itoa(x)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
