package runner

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/assert"
	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

// Limits of what a test keeps of its step's messages.
const (
	// MaxMessages is how many messages a test result keeps.
	MaxMessages = 50
	// maxMessageFailures is how many failures one expectation reports.
	maxMessageFailures = 3
)

// kindOf is the message kind an expectation list looks at.
func kindOf(requests bool) serverconn.MessageKind {
	if requests {
		return serverconn.KindRequest
	}
	return serverconn.KindNotification
}

// noun names a message kind in failures.
func noun(k serverconn.MessageKind) string {
	if k == serverconn.KindRequest {
		return "request"
	}
	return "notification"
}

// selectMessages returns the messages of kind k that e selects (method and where).
func selectMessages(msgs []serverconn.Message, k serverconn.MessageKind, e *collection.MessageExpect, vars assert.Vars) []*assert.Subject {
	var out []*assert.Subject
	for _, m := range msgs {
		if m.Kind != k || !collection.MatchMethod(e.Method, m.Method) {
			continue
		}
		s := messageSubject(m.Params, vars)
		if len(e.Where) > 0 && !holds(s, e.Where) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// awaitMessages waits, for the expectations with a wait, until each has its minimum count or
// its wait passed (within ctx).
func (cr *colRun) awaitMessages(ctx context.Context, t *collection.Test, in *serverconn.Inbox) {
	var longest time.Duration
	for _, list := range [][]*collection.MessageExpect{t.Notifications, t.Requests} {
		for _, e := range list {
			longest = max(longest, e.Wait)
		}
	}
	if longest == 0 || in == nil {
		return
	}
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, longest)
	defer cancel()
	in.Wait(wctx, func(msgs []serverconn.Message) bool {
		waited := time.Since(start)
		for i, list := range [][]*collection.MessageExpect{t.Notifications, t.Requests} {
			for _, e := range list {
				if e.Wait == 0 || e.Wait <= waited || e.Order != nil {
					continue
				}
				if len(selectMessages(msgs, kindOf(i == 1), e, cr.vars)) < e.Count.Min {
					return false
				}
			}
		}
		return true
	})
}

// checkMessages checks the test's notifications: and requests: against the step's messages.
func (cr *colRun) checkMessages(ctx context.Context, t *collection.Test, msgs []serverconn.Message) []result.Failure {
	var fails []result.Failure
	for i, list := range [][]*collection.MessageExpect{t.Notifications, t.Requests} {
		k := kindOf(i == 1)
		for _, e := range list {
			fails = append(fails, cr.checkExpect(ctx, e, k, msgs)...)
		}
	}
	return fails
}

// checkExpect checks one expectation.
func (cr *colRun) checkExpect(ctx context.Context, e *collection.MessageExpect, k serverconn.MessageKind, msgs []serverconn.Message) []result.Failure {
	label := noun(k) + "s"
	if e.Order != nil {
		if got, ok := inOrder(msgs, k, e.Order); !ok {
			return []result.Failure{{Assertion: label, Path: strings.Join(e.Order, " → "), Line: e.Pos.Line,
				Expected: "in this order: " + strings.Join(e.Order, ", "), Actual: cut(got, 300),
				Message: fmt.Sprintf("the %s did not come in the order %s", label, strings.Join(e.Order, ", "))}}
		}
		return nil
	}
	sel := selectMessages(msgs, k, e, cr.vars)
	what := e.Method
	if len(e.Where) > 0 {
		what += " (matching where)"
	}
	var fails []result.Failure
	if !e.Count.Holds(len(sel)) {
		f := result.Failure{Assertion: label, Path: e.Method, Line: e.Pos.Line,
			Expected: "count " + e.Count.String(), Actual: fmt.Sprint(len(sel)),
			Message: fmt.Sprintf("expected %s %s %s, got %d", e.Count, what, label, len(sel))}
		if others := methodsOf(msgs, k); others != "" {
			f.Message += "; the step's " + label + ": " + others
		}
		fails = append(fails, f)
	}
	for n, s := range sel {
		for _, a := range e.Expect {
			if len(fails) >= maxMessageFailures {
				return fails
			}
			if f := a.Checker.Check(ctx, s); f != nil {
				f.Message = fmt.Sprintf("%s #%d (%s): %s", noun(k), n+1, e.Method, f.Message)
				if f.Line == 0 {
					f.Line = a.Pos.Line
				}
				fails = append(fails, *f)
			}
		}
	}
	if e.Increasing != nil && len(fails) < maxMessageFailures {
		if f := increasing(ctx, e, sel); f != nil {
			f.Assertion = label
			fails = append(fails, *f)
		}
	}
	return fails
}

// increasing checks that the value at e.Increasing grows strictly from one message to the next.
func increasing(ctx context.Context, e *collection.MessageExpect, sel []*assert.Subject) *result.Failure {
	var prev any
	for n, s := range sel {
		v, err := e.Increasing.Lookup(ctx, s.Doc)
		if err != nil {
			return &result.Failure{Path: e.Increasing.String(), Line: e.Pos.Line, Actual: assert.Excerpt(s.Doc, 200),
				Message: fmt.Sprintf("%s #%d: %v", e.Method, n+1, err)}
		}
		if n > 0 && !less(prev, v) {
			return &result.Failure{Path: e.Increasing.String(), Line: e.Pos.Line,
				Expected: "greater than " + assert.ToString(prev), Actual: assert.ToString(v),
				Message: fmt.Sprintf("%s #%d: %s did not increase (%s after %s)", e.Method, n+1, e.Increasing, assert.ToString(v), assert.ToString(prev))}
		}
		prev = v
	}
	return nil
}

// less compares two numbers, or two strings; other pairs are never in order.
func less(a, b any) bool {
	switch a := a.(type) {
	case float64:
		bf, ok := b.(float64)
		return ok && a < bf
	case string:
		bs, ok := b.(string)
		return ok && a < bs
	}
	return false
}

// inOrder reports whether messages of kind k matching the patterns came in the pattern's
// order (a subsequence), and the methods that came, for the failure.
func inOrder(msgs []serverconn.Message, k serverconn.MessageKind, order []string) (string, bool) {
	next := 0
	for _, m := range msgs {
		if m.Kind == k && next < len(order) && collection.MatchMethod(order[next], m.Method) {
			next++
		}
	}
	return methodsOf(msgs, k), next == len(order)
}

// methodsOf lists the methods of the messages of kind k, in order, runs collapsed ("a ×3, b").
func methodsOf(msgs []serverconn.Message, k serverconn.MessageKind) string {
	var parts []string
	last, n := "", 0
	flush := func() {
		if n == 1 {
			parts = append(parts, last)
		} else if n > 1 {
			parts = append(parts, fmt.Sprintf("%s ×%d", last, n))
		}
	}
	for _, m := range msgs {
		if m.Kind != k {
			continue
		}
		if m.Method == last {
			n++
			continue
		}
		flush()
		last, n = m.Method, 1
	}
	flush()
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// resultMessages turns a step's messages into the result's, masked and bounded.
func resultMessages(msgs []serverconn.Message, mask func(string) string) (out []result.Message, dropped int) {
	for i, m := range msgs {
		if i >= MaxMessages {
			return out, len(msgs) - MaxMessages
		}
		rm := result.Message{Kind: string(m.Kind), Method: mask(m.Method)}
		if len(m.Params) > 0 {
			rm.Params = excerptRaw(m.Params, mask)
		}
		if m.Reply != nil {
			if m.Reply.Code != 0 {
				rm.Error = mask(fmt.Sprintf("%d %s", m.Reply.Code, m.Reply.Message))
			} else {
				rm.Reply = excerptRaw(m.Reply.Result, mask)
			}
		}
		out = append(out, rm)
	}
	return out, 0
}

// keepsMessages reports whether a test's result keeps its step's messages: when it looks at
// them, answers requests, or the server asked the client something.
func keepsMessages(t *collection.Test, msgs []serverconn.Message) bool {
	if t.WantsMessages() || t.Client != nil {
		return len(msgs) > 0
	}
	for _, m := range msgs {
		if m.Kind == serverconn.KindRequest {
			return true
		}
	}
	return false
}
