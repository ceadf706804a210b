package fuzz

import (
	"bytes"
	"sort"

	"github.com/mcpspec/mcpspec/detect/fuzz/mutate"
	"github.com/mcpspec/mcpspec/internal/jsonscan"
)

// Shrinking: smaller inputs that still show a finding. Every candidate costs one run against
// the server, so the strategies go for the large cuts first: repeated runs (a long string, a
// long array, deep nesting) are cut by binary search on their count, then object members are
// removed, then, for small frames that are not JSON, chunks of bytes (delta debugging).
// pred answers whether a candidate still shows the finding; it returns false once its budget
// is spent, which ends every strategy.

// shrinkBytes returns the smallest variant of b it finds for which pred holds; pred(b) is
// assumed true.
func shrinkBytes(b []byte, pred func([]byte) bool) []byte {
	b = shrinkRuns(b, pred)
	b = shrinkMembers(b, pred)
	if len(b) <= 4096 && !jsonLike(b) {
		b = ddmin(b, pred)
	}
	return b
}

// jsonLike reports whether b parses as JSON once the id placeholder is read as a number.
func jsonLike(b []byte) bool {
	_, ok := jsonscan.ScanSpans(placeheld(b), 0)
	return ok
}

// placeheld replaces the id placeholder by a number of the same length, so a template parses
// and byte offsets stay the same.
func placeheld(b []byte) []byte {
	return bytes.ReplaceAll(b, []byte(mutate.IDToken), []byte("1234"))
}

// run is reps copies of a unit of bytes starting at start.
type run struct{ start, unit, reps int }

func (r run) end() int { return r.start + r.unit*r.reps }

// minRun is how many repetitions make a run worth shrinking.
const minRun = 8

// findRuns returns the maximal runs of b (units of 1 to 8 bytes repeated at least minRun
// times), left to right, never overlapping.
func findRuns(b []byte) []run {
	var out []run
	for i := 0; i < len(b); {
		best := run{}
		for unit := 1; unit <= 8 && i+unit*minRun <= len(b); unit++ {
			reps := 1
			for j := i + unit; j+unit <= len(b) && bytes.Equal(b[j:j+unit], b[i:i+unit]); j += unit {
				reps++
			}
			if reps >= minRun && reps*unit > best.reps*best.unit {
				best = run{start: i, unit: unit, reps: reps}
			}
		}
		if best.reps == 0 {
			i++
			continue
		}
		out = append(out, best)
		i = best.end()
	}
	return out
}

// closerOf reports whether unit closes containers only (`]`, `}`).
func closerOnly(unit []byte) bool {
	return len(bytes.Trim(unit, "]}")) == 0
}

// opensContainers reports whether unit opens a container and closes none.
func opensContainers(unit []byte) bool {
	return bytes.ContainsAny(unit, "[{") && !bytes.ContainsAny(unit, "]}")
}

// shrinkRuns cuts the longest runs of b, pairing a run of openers with the run of closers
// that matches it so nesting stays balanced.
func shrinkRuns(b []byte, pred func([]byte) bool) []byte {
	for round := 0; round < 3; round++ {
		runs := findRuns(b)
		sort.SliceStable(runs, func(i, j int) bool { return runs[i].unit*runs[i].reps > runs[j].unit*runs[j].reps })
		changed := false
		for _, r := range runs {
			if r.unit*r.reps < 32 {
				break
			}
			unit := b[r.start : r.start+r.unit]
			if closerOnly(unit) {
				continue // cut together with its openers
			}
			var closer *run
			if opensContainers(unit) {
				// The closers run on past ours when outer containers end right after.
				for _, c := range findRuns(b[r.end():]) {
					if c.reps >= r.reps && closerOnly(b[r.end()+c.start:r.end()+c.start+c.unit]) {
						c.start += r.end()
						closer = &c
						break
					}
				}
				if closer == nil {
					continue
				}
			}
			build := func(k int) []byte {
				out := append([]byte(nil), b[:r.start+r.unit*k]...)
				if closer == nil {
					return append(out, b[r.end():]...)
				}
				out = append(out, b[r.end():closer.start]...)
				return append(out, b[closer.start+closer.unit*(r.reps-k):]...)
			}
			k := smallest(r.reps, func(k int) bool { return pred(build(k)) })
			if k < r.reps {
				b = build(k)
				changed = true
				break // offsets moved: find the runs again
			}
		}
		if !changed {
			break
		}
	}
	return b
}

// smallest returns the least k in [0, n] for which ok holds, by binary search, assuming ok(n)
// holds and ok is monotonic; it calls ok about log2(n) times.
func smallest(n int, ok func(int) bool) int {
	lo, hi := 0, n // ok(hi) is known to hold
	for lo < hi {
		mid := lo + (hi-lo)/2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return hi
}

// maxMemberTries bounds how many single members shrinkMembers tries to remove.
const maxMemberTries = 16

// shrinkMembers removes object members (largest first) while pred holds. Objects with many
// members lose them by halves first.
func shrinkMembers(b []byte, pred func([]byte) bool) []byte {
	spans, ok := jsonscan.ScanSpans(placeheld(b), 3)
	if !ok {
		return b
	}
	// Halves of each large object, then single members.
	for _, obj := range spans {
		if len(obj) < 8 {
			continue
		}
		for _, half := range [][]jsonscan.Span{obj[:len(obj)/2], obj[len(obj)/2:]} {
			cand := removeSpans(b, obj, half)
			if pred(cand) {
				return shrinkMembers(cand, pred)
			}
		}
	}
	var all []struct {
		obj []jsonscan.Span
		m   jsonscan.Span
	}
	for _, obj := range spans {
		for _, m := range obj {
			all = append(all, struct {
				obj []jsonscan.Span
				m   jsonscan.Span
			}{obj, m})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].m.End-all[i].m.Start > all[j].m.End-all[j].m.Start })
	for i, x := range all {
		if i >= maxMemberTries {
			break
		}
		cand := removeSpans(b, x.obj, []jsonscan.Span{x.m})
		if pred(cand) {
			return shrinkMembers(cand, pred)
		}
	}
	return b
}

// removeSpans removes members (a contiguous slice of obj's members) with the comma that joins
// them to the rest, so the object stays valid JSON.
func removeSpans(b []byte, obj, gone []jsonscan.Span) []byte {
	first, last := gone[0], gone[len(gone)-1]
	start, end := first.Start, last.End
	idxFirst, idxLast := -1, -1
	for i, m := range obj {
		if m == first {
			idxFirst = i
		}
		if m == last {
			idxLast = i
		}
	}
	switch {
	case idxLast < len(obj)-1:
		end = obj[idxLast+1].Start // through the comma after
	case idxFirst > 0:
		start = obj[idxFirst-1].End // from the comma before
	}
	out := append([]byte(nil), b[:start]...)
	return append(out, b[end:]...)
}

// ddmin is delta debugging over bytes: remove chunks, halving their size, while pred holds.
func ddmin(b []byte, pred func([]byte) bool) []byte {
	for chunk := len(b) / 2; chunk >= 1; chunk /= 2 {
		for i := 0; i+chunk <= len(b); {
			cand := append(append([]byte(nil), b[:i]...), b[i+chunk:]...)
			if len(cand) > 0 && pred(cand) {
				b = cand
				continue
			}
			i += chunk
		}
	}
	return b
}
