package replay

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
)

// maxChanges is how many differences one answer lists at most.
const maxChanges = 50

// Change is one difference between a recorded and a replayed answer.
type Change struct {
	// Path is where the values differ, as a JSONPath ($.result.content[0].text).
	Path string `json:"path"`
	// Recorded is the recorded value; absent when the replayed answer added the member.
	Recorded json.RawMessage `json:"recorded,omitempty"`
	// Replayed is the value the server gave now; absent when it dropped the member.
	Replayed json.RawMessage `json:"replayed,omitempty"`
}

// Diff compares two JSON messages and returns where they differ, leaving out the paths
// ignore names (at most 50 changes; more is marked by a last change whose Path is "…").
// Numbers compare by value; object members by name, in any order.
func Diff(recorded, replayed []byte, ignore []Path) []Change {
	var a, b any
	if decode(recorded, &a) != nil || decode(replayed, &b) != nil {
		if bytes.Equal(recorded, replayed) {
			return nil
		}
		return []Change{{Path: "$", Recorded: raw(recorded), Replayed: raw(replayed)}}
	}
	d := &differ{ignore: ignore}
	d.walk(nil, a, b, true, true)
	return d.out
}

func decode(data []byte, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// raw keeps a value only when it is JSON (a Change must marshal).
func raw(b []byte) json.RawMessage {
	if json.Valid(b) {
		return b
	}
	s, _ := json.Marshal(string(b))
	return s
}

type differ struct {
	ignore []Path
	out    []Change
}

func (d *differ) ignored(path []string) bool {
	for _, p := range d.ignore {
		if p.matches(path) {
			return true
		}
	}
	return false
}

func (d *differ) add(path []string, a, b any, hasA, hasB bool) {
	if len(d.out) > maxChanges {
		return
	}
	if len(d.out) == maxChanges {
		d.out = append(d.out, Change{Path: "…"})
		return
	}
	c := Change{Path: render(path)}
	if hasA {
		c.Recorded, _ = json.Marshal(a)
	}
	if hasB {
		c.Replayed, _ = json.Marshal(b)
	}
	d.out = append(d.out, c)
}

func (d *differ) walk(path []string, a, b any, hasA, hasB bool) {
	if d.ignored(path) {
		return
	}
	if !hasA || !hasB {
		d.add(path, a, b, hasA, hasB)
		return
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			d.add(path, a, b, true, true)
			return
		}
		keys := make([]string, 0, len(x)+len(y))
		for k := range x {
			keys = append(keys, k)
		}
		for k := range y {
			if _, ok := x[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			va, okA := x[k]
			vb, okB := y[k]
			d.walk(append(slices.Clip(path), k), va, vb, okA, okB)
		}
	case []any:
		y, ok := b.([]any)
		if !ok {
			d.add(path, a, b, true, true)
			return
		}
		for i := range max(len(x), len(y)) {
			var va, vb any
			if i < len(x) {
				va = x[i]
			}
			if i < len(y) {
				vb = y[i]
			}
			d.walk(append(slices.Clip(path), "["+strconv.Itoa(i)+"]"), va, vb, i < len(x), i < len(y))
		}
	case json.Number:
		y, ok := b.(json.Number)
		if !ok || !sameNumber(x, y) {
			d.add(path, a, b, true, true)
		}
	default: // string, bool, nil
		if a != b {
			d.add(path, a, b, true, true)
		}
	}
}

func sameNumber(a, b json.Number) bool {
	if a == b {
		return true
	}
	fa, errA := a.Float64()
	fb, errB := b.Float64()
	return errA == nil && errB == nil && fa == fb
}
