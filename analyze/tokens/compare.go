package tokens

import (
	"slices"
	"strings"
)

// Change is how the cost of one tool changed between two reports.
type Change struct {
	Tool string `json:"tool"`
	// Status is "added", "removed" or "changed".
	Status string `json:"status"`
	// Before and After are the tool's Full and Core counts (zero when absent).
	FullBefore int `json:"fullBefore"`
	FullAfter  int `json:"fullAfter"`
	CoreBefore int `json:"coreBefore"`
	CoreAfter  int `json:"coreAfter"`
}

// FullDelta is FullAfter - FullBefore.
func (c Change) FullDelta() int { return c.FullAfter - c.FullBefore }

// Diff is what changed between two reports of the same encoding.
type Diff struct {
	// Changes lists tools added, removed or whose Full or Core count changed, largest absolute
	// change of Full first, then by name.
	Changes    []Change `json:"changes"`
	FullBefore int      `json:"fullBefore"`
	FullAfter  int      `json:"fullAfter"`
	CoreBefore int      `json:"coreBefore"`
	CoreAfter  int      `json:"coreAfter"`
}

// Compare says what changed from before to after. Both must use one encoding; the caller
// re-measures when they do not.
func Compare(before, after *Report) *Diff {
	d := &Diff{Changes: []Change{}, FullBefore: before.Total.Full, FullAfter: after.Total.Full, CoreBefore: before.Total.Core, CoreAfter: after.Total.Core}
	old := map[string]ToolCost{}
	for _, t := range before.Tools {
		old[t.Tool] = t
	}
	seen := map[string]bool{}
	for _, t := range after.Tools {
		seen[t.Tool] = true
		o, ok := old[t.Tool]
		switch {
		case !ok:
			d.Changes = append(d.Changes, Change{Tool: t.Tool, Status: "added", FullAfter: t.Full, CoreAfter: t.Core})
		case o.Full != t.Full || o.Core != t.Core:
			d.Changes = append(d.Changes, Change{Tool: t.Tool, Status: "changed", FullBefore: o.Full, FullAfter: t.Full, CoreBefore: o.Core, CoreAfter: t.Core})
		}
	}
	for _, t := range before.Tools {
		if !seen[t.Tool] {
			d.Changes = append(d.Changes, Change{Tool: t.Tool, Status: "removed", FullBefore: t.Full, CoreBefore: t.Core})
		}
	}
	slices.SortFunc(d.Changes, func(a, b Change) int {
		if x, y := abs(a.FullDelta()), abs(b.FullDelta()); x != y {
			return y - x
		}
		return strings.Compare(a.Tool, b.Tool)
	})
	return d
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
