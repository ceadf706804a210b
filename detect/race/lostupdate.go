package race

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/mcpspec/mcpspec/internal/synth"
	"github.com/mcpspec/mcpspec/session"
)

// LostUpdateVerdict is what the lost-update form concluded; its JSON form is the string.
type LostUpdateVerdict string

// Verdicts of the lost-update form.
const (
	// LostUpdateRace: concurrent writes reported success, and the read-back lacks some.
	LostUpdateRace LostUpdateVerdict = "race"
	// LostUpdateNone: the read-back showed every write that reported success.
	LostUpdateNone LostUpdateVerdict = "none lost"
	// LostUpdateSkipped: the form could not be judged (no string to carry a marker, a
	// read-back that does not show writes made one at a time, …).
	LostUpdateSkipped LostUpdateVerdict = "skipped"
)

// LostUpdates is what the lost-update form found: concurrent calls of a write tool, each
// with a marker of its own, then one read-back that must show every marker whose write
// reported success.
type LostUpdates struct {
	// ReadBack is the read tool and ReadBackArgs its arguments; Picked says why it was chosen
	// when --read-back did not name it.
	ReadBack     string         `json:"readBack"`
	ReadBackArgs map[string]any `json:"readBackArgs"`
	Picked       string         `json:"picked,omitempty"`
	// Fields are the arguments that carried each write's marker.
	Fields  []string          `json:"fields,omitempty"`
	Verdict LostUpdateVerdict `json:"verdict"`
	Reason  string            `json:"reason"`
	// Writes counts the concurrent writes; Succeeded those answered without an error.
	Writes    int `json:"writes"`
	Succeeded int `json:"succeeded"`
	// Lost are the markers of writes that reported success and that the read-back lacks.
	Lost []LostMarker `json:"lost,omitempty"`
}

// LostMarker is one write that reported success and is missing from the read-back.
type LostMarker struct {
	Call   int    `json:"call"`
	Marker string `json:"marker"`
}

// writeVerbs start the names of tools that add to a store; readVerbs those that read one.
var (
	writeVerbs = []string{"add", "create", "insert", "append", "put", "set", "save", "write", "update", "push", "post", "store", "record", "log", "upsert", "register"}
	readVerbs  = []string{"list", "get", "read", "search", "find", "query", "fetch", "show", "open", "view", "dump", "export"}
	nameWords  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Z]?[a-z0-9]+|[A-Z]+`) })
)

// words splits a tool name into lower-case words: add_note, addNote, add-note → add, note.
func words(name string) []string {
	var out []string
	for _, w := range nameWords().FindAllString(name, -1) {
		out = append(out, strings.ToLower(w))
	}
	return out
}

// stem drops a plural's ending: entities → entity, notes → note.
func stem(w string) string {
	if s, ok := strings.CutSuffix(w, "ies"); ok && len(s) >= 2 {
		return s + "y"
	}
	if s, ok := strings.CutSuffix(w, "s"); ok && len(s) >= 3 && !strings.HasSuffix(s, "s") {
		return s
	}
	return w
}

// pickReadBack picks the read tool that pairs with write tool w, or none: w must be named as a
// write (add_note, createEntities); a candidate is named as a read (list_notes, read_graph),
// annotated readOnlyHint or not annotated otherwise, and needs no argument. One that names the
// same thing (notes, note) wins; else the only candidate. Ties pick none.
func pickReadBack(w session.Tool, tools []session.Tool) (session.Tool, string, bool) {
	ww := words(w.Name)
	if len(ww) < 2 || !slices.Contains(writeVerbs, ww[0]) {
		return session.Tool{}, "", false
	}
	nouns := map[string]bool{}
	for _, x := range ww[1:] {
		nouns[stem(x)] = true
	}
	var same, other []session.Tool
	for _, t := range tools {
		tw := words(t.Name)
		if t.Name == w.Name || len(tw) < 2 || !slices.Contains(readVerbs, tw[0]) {
			continue
		}
		var a struct {
			ReadOnlyHint    *bool `json:"readOnlyHint"`
			DestructiveHint *bool `json:"destructiveHint"`
		}
		_ = json.Unmarshal(t.Annotations, &a)
		if a.ReadOnlyHint != nil && !*a.ReadOnlyHint || a.DestructiveHint != nil && *a.DestructiveHint {
			continue
		}
		var sch struct {
			Required []string `json:"required"`
		}
		_ = json.Unmarshal(t.InputSchema, &sch)
		if len(sch.Required) > 0 {
			continue
		}
		match := false
		for _, x := range tw[1:] {
			if nouns[stem(x)] {
				match = true
			}
		}
		if match {
			same = append(same, t)
		} else {
			other = append(other, t)
		}
	}
	switch {
	case len(same) == 1:
		return same[0], fmt.Sprintf("picked %s: it reads what %s writes (same name) and needs no argument", same[0].Name, w.Name), true
	case len(same) == 0 && len(other) == 1:
		return other[0], fmt.Sprintf("picked %s: the only read tool that needs no argument", other[0].Name), true
	}
	return session.Tool{}, "", false
}

// lostUpdates writes concurrently, each call with a marker of its own, then reads back: every
// write that reported success must show. Two writes one at a time first check that the
// read-back shows writes at all, and keeps them (a store that keeps only the last write
// overwrites by design).
func (k *checker) lostUpdates(ctx context.Context, tool session.Tool, args map[string]any, rb session.Tool, rbArgs map[string]any) *LostUpdates {
	lu := &LostUpdates{ReadBack: rb.Name, ReadBackArgs: rbArgs}
	if lu.ReadBackArgs == nil {
		lu.ReadBackArgs = synth.Args(rb.InputSchema)
	}
	fields := freeStrings(args, schemaOf(tool.InputSchema))
	if len(fields) == 0 {
		lu.Verdict, lu.Reason = LostUpdateSkipped, "no free-form string argument to carry a marker"
		return lu
	}
	for _, f := range fields {
		lu.Fields = append(lu.Fields, f.path)
	}
	nonce := newNonce()
	marker := func(i int) string { return fmt.Sprintf("mcpspec-lu-%s-%04d", nonce, i) }
	tagged := func(i int) map[string]any {
		out := deepCopy(args).(map[string]any)
		for _, f := range fields {
			f.set(out, marker(i))
		}
		return out
	}
	readBack := func() (string, error) {
		res, err := k.c.CallTool(ctx, rb.Name, lu.ReadBackArgs, nil)
		if err != nil {
			return "", err
		}
		if res.IsError {
			return "", fmt.Errorf("%s answered isError: %s", rb.Name, excerpt(res.Raw, 200))
		}
		return string(res.Raw), nil
	}
	drop := func(c *call) { c.o.Result = nil }

	// Two writes one at a time: both must show.
	const alone = 2
	for i := range alone {
		out := k.sequential(ctx, tagged(i), 1, drop)
		if len(out) == 0 {
			return nil
		}
		if o := out[0].o; !o.Answered() || o.IsError || o.Category != "" {
			lu.Verdict, lu.Reason = LostUpdateSkipped, fmt.Sprintf("a write made alone failed: %s", orDash(o.Message))
			return lu
		}
	}
	seen, err := readBack()
	if err != nil {
		lu.Verdict, lu.Reason = LostUpdateSkipped, "the read-back failed: "+err.Error()
		return lu
	}
	if !strings.Contains(seen, marker(0)) || !strings.Contains(seen, marker(1)) {
		lu.Verdict = LostUpdateSkipped
		lu.Reason = fmt.Sprintf("after 2 writes made one at a time, %s shows %s: it does not show every write (or the store keeps only the last), so lost updates cannot show",
			rb.Name, shown(seen, marker(0), marker(1)))
		return lu
	}
	con := k.burst(ctx, func(i int) map[string]any { return tagged(alone + i) }, drop)
	lu.Writes = len(con)
	var ok []int
	for _, c := range con {
		if c.o.Answered() && !c.o.IsError && c.o.Category == "" {
			ok = append(ok, alone+c.o.Index)
		}
	}
	lu.Succeeded = len(ok)
	if ctx.Err() != nil {
		return nil
	}
	seen, err = readBack()
	if err != nil {
		lu.Verdict, lu.Reason = LostUpdateSkipped, "the read-back after the concurrent writes failed: "+err.Error()
		return lu
	}
	for _, i := range ok {
		if !strings.Contains(seen, marker(i)) {
			lu.Lost = append(lu.Lost, LostMarker{Call: i, Marker: marker(i)})
		}
	}
	if len(lu.Lost) > 0 {
		lu.Verdict = LostUpdateRace
		lu.Reason = fmt.Sprintf("lost updates: %d of %d concurrent writes reported success, and %s shows only %d of them (lost: %s), while 2 writes made one at a time both showed",
			lu.Succeeded, lu.Writes, rb.Name, lu.Succeeded-len(lu.Lost), markerList(lu.Lost))
		return lu
	}
	lu.Verdict = LostUpdateNone
	lu.Reason = fmt.Sprintf("%s shows every one of the %d concurrent writes that reported success (of %d)", rb.Name, lu.Succeeded, lu.Writes)
	return lu
}

// shown says which of two markers a read-back shows.
func shown(seen, a, b string) string {
	switch ha, hb := strings.Contains(seen, a), strings.Contains(seen, b); {
	case ha && !hb:
		return "the first only"
	case hb && !ha:
		return "the second only"
	}
	return "neither"
}

// markerList renders lost markers, at most five.
func markerList(l []LostMarker) string {
	var out []string
	for i, m := range l {
		if i == 5 {
			out = append(out, fmt.Sprintf("and %d more", len(l)-5))
			break
		}
		out = append(out, fmt.Sprintf("call %d's %s", m.Call, m.Marker))
	}
	return strings.Join(out, ", ")
}
