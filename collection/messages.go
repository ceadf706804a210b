package collection

import (
	"fmt"
	"path"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mcpspec/mcpspec/assert"
)

// MessageExpect is one expectation over what the server sent while a test's step ran: its
// notifications (`notifications:`) or its requests to the client (`requests:`). An entry either
// counts and checks the messages of a method, or (Order set) checks that methods came in an
// order.
type MessageExpect struct {
	// Method selects the messages by method, as a path.Match pattern ("notifications/*"
	// matches every notifications/x, not notifications/x/y).
	Method string
	// Where are assertions over a message's params that select it too; all must hold.
	Where []*Assertion
	// Count bounds how many messages are selected (default: at least one).
	Count CountRange
	// Expect are assertions every selected message's params must pass.
	Expect []*Assertion
	// Increasing, when set, is a path whose value must increase strictly from one selected
	// message to the next (progress must).
	Increasing *assert.Path
	// Wait is how long to wait after the step's answer for Count.Min messages to arrive (they
	// may come after the answer); zero checks at once.
	Wait time.Duration
	// Order, when set, makes this an order entry: some messages matching these method patterns
	// came in this order (others may come between them).
	Order []string
	Pos   Pos
}

// CountRange bounds a count: Min ≤ n ≤ Max; Max < 0 means no upper bound.
type CountRange struct {
	Min, Max int
}

// Holds reports whether n is within the range.
func (r CountRange) Holds(n int) bool { return n >= r.Min && (r.Max < 0 || n <= r.Max) }

// String renders the range as a person reads it: "3", "at least 1", "between 2 and 5".
func (r CountRange) String() string {
	switch {
	case r.Max < 0:
		return fmt.Sprintf("at least %d", r.Min)
	case r.Min == r.Max:
		return fmt.Sprint(r.Min)
	case r.Min == 0:
		return fmt.Sprintf("at most %d", r.Max)
	}
	return fmt.Sprintf("between %d and %d", r.Min, r.Max)
}

// maxCount bounds the counts a collection may ask for.
const maxCount = 1_000_000

// messageKeys are the keys of one `notifications:`/`requests:` entry.
var messageKeys = []string{"method", "where", "count", "expect", "increasing", "wait", "order"}

// decodeMessageExpects reads a test's `notifications:` or `requests:` list.
func (d *decoder) decodeMessageExpects(n *yaml.Node, t *Test, what string) []*MessageExpect {
	if n.Kind != yaml.SequenceNode {
		d.errf(n, "write a list: [{method: notifications/progress, count: {min: 1}}]", "%s must be a list, got %s", what, kindName(n))
		return nil
	}
	var out []*MessageExpect
	for i, e := range n.Content {
		ew := fmt.Sprintf("%s #%d", what, i+1)
		fs, ok := d.fields(e, ew, messageKeys)
		if !ok {
			continue
		}
		m := &MessageExpect{Pos: d.pos(e), Count: CountRange{Min: 1, Max: -1}}
		if f, ok := fs["order"]; ok {
			for _, k := range []string{"method", "where", "count", "expect", "increasing", "wait"} {
				if g, ok := fs[k]; ok {
					d.errf(g.key, "put the order in an entry of its own", "%s: order takes no %s", ew, k)
				}
			}
			list, ok := d.strList(f.val, ew+" order")
			if ok && len(list) < 2 {
				d.errf(f.val, "", "%s: an order needs at least two methods", ew)
			}
			for j, p := range list {
				if !d.methodPattern(f.val.Content[j], p, ew+" order") {
					ok = false
				}
			}
			if ok {
				m.Order = list
				out = append(out, m)
			}
			continue
		}
		f, ok := fs["method"]
		if !ok {
			d.errf(e, "add method: notifications/progress (patterns like notifications/* work)", "%s needs a method (or an order)", ew)
			continue
		}
		if m.Method, ok = d.nonEmpty(f.val, ew+" method"); !ok || !d.methodPattern(f.val, m.Method, ew+" method") {
			continue
		}
		if f, ok := fs["where"]; ok {
			m.Where = d.decodeMessageAssertions(f.val, t, ew+" where")
		}
		if f, ok := fs["expect"]; ok {
			m.Expect = d.decodeMessageAssertions(f.val, t, ew+" expect")
		}
		if f, ok := fs["count"]; ok {
			m.Count = d.decodeCount(f.val, ew+" count")
		}
		if f, ok := fs["increasing"]; ok {
			if src, ok := d.nonEmpty(f.val, ew+" increasing"); ok {
				p, err := assert.CompilePath(src)
				if err != nil {
					d.errf(f.val, "", "%s increasing: %v", ew, err)
				} else {
					m.Increasing = p
				}
			}
		}
		if f, ok := fs["wait"]; ok {
			m.Wait, _ = d.duration(f.val, ew+" wait")
			if m.Count.Min == 0 {
				d.errf(f.key, "wait is for messages that may come after the answer: give count a minimum", "%s: wait with no minimum count waits for nothing", ew)
			}
		}
		out = append(out, m)
	}
	return out
}

// methodPattern checks a method pattern; it reports whether the pattern is usable.
func (d *decoder) methodPattern(n *yaml.Node, p, what string) bool {
	if _, err := path.Match(p, ""); err != nil {
		d.errf(n, "patterns use * and ? within one /-separated part, and [...] classes", "%s: bad pattern %q: %v", what, p, err)
		return false
	}
	return true
}

// decodeCount reads `count: N` or `count: {min, max}`.
func (d *decoder) decodeCount(n *yaml.Node, what string) CountRange {
	if n.Kind == yaml.ScalarNode {
		c, ok := d.integer(n, what, 0, maxCount)
		if !ok {
			return CountRange{Min: 1, Max: -1}
		}
		return CountRange{Min: int(c), Max: int(c)}
	}
	fs, ok := d.fields(n, what, []string{"min", "max"})
	r := CountRange{Max: -1}
	if !ok {
		return CountRange{Min: 1, Max: -1}
	}
	if len(fs) == 0 {
		d.errf(n, "", "%s needs min or max", what)
	}
	if f, ok := fs["min"]; ok {
		v, _ := d.integer(f.val, what+" min", 0, maxCount)
		r.Min = int(v)
	}
	if f, ok := fs["max"]; ok {
		v, _ := d.integer(f.val, what+" max", 0, maxCount)
		r.Max = int(v)
		if r.Max < r.Min {
			d.errf(f.val, "", "%s: max %d is below min %d", what, r.Max, r.Min)
		}
	}
	return r
}

// MatchMethod reports whether method matches the pattern (see [MessageExpect].Method).
func MatchMethod(pattern, method string) bool {
	ok, _ := path.Match(pattern, method)
	return ok
}
