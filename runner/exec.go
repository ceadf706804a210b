package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/assert"
	"github.com/mcpspec/mcpspec/assert/toolschema"
	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

// attempt is one try of a test, with what the final result needs from it.
type attempt struct {
	res      result.Attempt
	findings []result.Finding // what the server sent during the attempt that answered no request
	request  string
	response string
	stderr   string
	subject  *assert.Subject // nil when nothing came back
	// messages are the notifications and server requests of the step; messagesDropped counts
	// those over the inbox's bound.
	messages        []serverconn.Message
	messagesDropped int
	// noRetry is set when another attempt cannot help (the server never connected, the run
	// was interrupted).
	noRetry bool
	// notRun, when set, is why the test was not run: its server's connect failure was
	// reported by an earlier test.
	notRun string
}

// runTest runs every attempt of t and fills rt. It returns when rt is final (but not masked).
func (cr *colRun) runTest(ctx context.Context, t *collection.Test, rt *result.Test) {
	start := time.Now()
	var last *attempt
	for n := 1; n <= t.Retries+1; n++ {
		if n > 1 {
			timer := time.NewTimer(cr.r.opts.Backoff.Delay(n - 1))
			select {
			case <-ctx.Done():
				timer.Stop()
			case <-timer.C:
			}
			if ctx.Err() != nil {
				break
			}
		}
		last = cr.attempt(ctx, t)
		if last.notRun != "" {
			rt.Status, rt.SkipReason = result.Skipped, "not run: "+last.notRun
			rt.Attempts = []result.Attempt{}
			return
		}
		rt.Findings = append(rt.Findings, last.findings...)
		if cr.r.opts.Strict && len(last.findings) > 0 && last.res.Status != result.Errored {
			last.res.Status = result.Failed
			last.res.Failures = append(last.res.Failures, strictFailure(last.findings))
		}
		rt.Attempts = append(rt.Attempts, last.res)
		if last.res.Status == result.Passed || last.noRetry || ctx.Err() != nil {
			break
		}
	}
	rt.Duration = time.Since(start)
	rt.Status = last.res.Status
	rt.Latency = last.res.Latency
	rt.Failures = last.res.Failures
	rt.Error = last.res.Error
	rt.Request, rt.Response = last.request, last.response
	if rt.Status != result.Passed {
		rt.Stderr = last.stderr
	}
	if last.subject != nil {
		rt.SnapshotsWritten = last.subject.SnapshotsWritten
	}
	if keepsMessages(t, last.messages) {
		rt.Messages, rt.MessagesDropped = resultMessages(last.messages, cr.mask)
		rt.MessagesDropped += last.messagesDropped
	}
	if rt.Status == result.Passed && len(t.Extract) > 0 && last.subject != nil {
		cr.extract(ctx, t, rt, last.subject)
	}
}

// extract stores the test's extracted values; a path that selects nothing, or a regex that
// matches nothing, fails the test.
func (cr *colRun) extract(ctx context.Context, t *collection.Test, rt *result.Test, s *assert.Subject) {
	for _, e := range t.Extract {
		v, actual, err := extractValue(ctx, e, s)
		if err != nil {
			path := ""
			if e.Path != nil {
				path = e.Path.String()
			}
			f := result.Failure{Assertion: "extract", Path: path, Line: e.Pos.Line,
				Actual:  actual,
				Message: fmt.Sprintf("extract %s: %v", e.Name, err)}
			rt.Status = result.Failed
			rt.Failures = append(rt.Failures, f)
			if n := len(rt.Attempts); n > 0 {
				rt.Attempts[n-1].Status = result.Failed
				rt.Attempts[n-1].Failures = append(rt.Attempts[n-1].Failures, f)
			}
			continue
		}
		cr.vars.Set(e.Name, v)
		if rt.Extracted == nil {
			rt.Extracted = map[string]string{}
		}
		rt.Extracted[e.Name] = cut(assert.ToString(v), MaxExcerpt)
	}
}

// extractValue is the value e extracts from s: the value at its path, or with a regex its first
// group (or whole match) in the text at its path (the result's text without a path). On
// failure, actual is an excerpt of what was searched.
func extractValue(ctx context.Context, e *collection.Extract, s *assert.Subject) (v any, actual string, err error) {
	if e.Regex == nil {
		v, err = e.Path.Lookup(ctx, s.Doc)
		return v, assert.Excerpt(s.Doc, 200), err
	}
	text := s.Text()
	if e.Path != nil {
		at, err := e.Path.Lookup(ctx, s.Doc)
		if err != nil {
			return nil, assert.Excerpt(s.Doc, 200), err
		}
		text = assert.ToString(at)
	}
	m := e.Regex.FindStringSubmatch(text)
	if m == nil {
		return nil, cut(text, 200), fmt.Errorf("regex /%s/ matches nothing in the text", e.Regex.String())
	}
	return m[len(m)-1], "", nil
}

// attempt makes one try of t under the test's timeout.
func (cr *colRun) attempt(ctx context.Context, t *collection.Test) *attempt {
	start := time.Now()
	a := &attempt{}
	defer func() { a.res.Duration = time.Since(start) }()
	errored := func(e *result.Error) *attempt {
		a.res.Status, a.res.Error = result.Errored, e
		return a
	}
	p := cr.pools[t.Server]
	if p == nil {
		a.noRetry = true
		return errored(&result.Error{Message: fmt.Sprintf("the collection has no server %q", t.Server)})
	}
	// Starting the server and the handshake are bounded by the server's connect timeout, not
	// by the test's: the test's timeout starts with its first request.
	c, cerr, notRun := p.acquireFor(ctx, t.Name)
	actx, cancel := context.WithTimeout(ctx, t.Timeout)
	defer cancel()
	if notRun != "" {
		// An earlier test reported why the server cannot be reached: say it once.
		a.noRetry, a.notRun = true, notRun
		a.res.Status = result.Skipped
		return a
	}
	if cerr != nil {
		a.noRetry = true
		if ctx.Err() != nil {
			cerr = &result.Error{Category: session.Cancelled, Message: "interrupted while connecting"}
		}
		return errored(cerr)
	}
	offset := serverconn.FileSize(c.StderrPath)
	if err := cr.r.wait(actx); err != nil {
		p.release(c, false)
		if ctx.Err() != nil {
			return errored(&result.Error{Category: session.Cancelled, Message: "interrupted before sending"})
		}
		return errored(&result.Error{Category: session.Timeout,
			Message: "waiting for the rate limit would pass the test's timeout",
			Hint:    "raise --rate or the test's timeout"})
	}
	callTimeout := orDefault(p.def.Timeouts.Call, cr.r.opts.CallTimeout)
	var contracts *toolschema.Tools
	if cr.r.opts.Strict && t.ExpectError == nil {
		// A negative test (expectError) is sent as written: arguments that break the schema
		// are its point.
		contracts = p.contracts
	}
	// What the server sent before the step is not the step's; its requests during the step
	// are answered by the test's client rules.
	c.Inbox.Discard()
	c.Inbox.SetHandler(cr.replier(t))
	o := send(actx, c.Session, t.Step, cr.vars, sendOptions{callTimeout: callTimeout, contracts: contracts, progress: t.WantsMessages()})
	cat := session.CategoryOf(o.err)
	if o.err == nil && o.sent() {
		cr.awaitMessages(actx, t, c.Inbox)
	}
	a.messages, a.messagesDropped = c.Inbox.Take()
	// The session is given back once the attempt is judged: what its server sent meanwhile
	// (a duplicate answer right after the real one) is this attempt's. The scheduler never runs
	// more tests than a server has sessions, so no test waits for it.
	defer func() {
		a.findings = cr.findings.take(c, t.Server, answered(o.err))
		c.Inbox.SetHandler(nil)
		p.release(c, cat == session.Crash || cat == session.Disconnected || o.broken)
	}()
	if o.sent() {
		p.exerciseStep(t.Step, o.method, o.request)
	}

	mask := cr.mask
	if o.request != nil {
		a.request = o.method + " " + excerptValue(o.request, mask)
	}
	a.response = excerptRaw(o.raw, mask)
	a.res.Latency = o.latency
	defer func() {
		if a.res.Status != result.Passed {
			a.stderr = stderrExcerpt(c, offset)
		}
	}()

	switch {
	case o.varErr != nil:
		a.noRetry = true
		return errored(&result.Error{Message: "expand variables: " + o.varErr.Error(),
			Hint: "define it with --var, --env-file, the environment or variables:, or extract it in a test this one depends on"})
	case o.strictErr != nil:
		a.noRetry = true
		return errored(&result.Error{Category: session.ProtocolError, Message: "not sent (--strict): " + o.strictErr.Error(),
			Hint: "fix the test's arguments to match the tool's inputSchema (mcpspec tools --server … shows it), or run without --strict"})
	case o.err != nil && (o.rpcErr == nil || t.ExpectError == nil):
		e := describeCall(c, o.err, o.method, callTimeout)
		if ctx.Err() != nil {
			e.Category = session.Cancelled
			a.noRetry = true
		} else if errors.Is(actx.Err(), context.DeadlineExceeded) && e.Category == session.Cancelled {
			e.Category = session.Timeout
			e.Message = fmt.Sprintf("%s: no answer within the test's timeout %s", o.method, t.Timeout)
		}
		return errored(e)
	}

	if cr.r.opts.Strict && o.err == nil {
		if tc, ok := t.Step.(*collection.ToolCall); ok {
			if err := p.contracts.CheckResult(tc.Tool, o.raw); err != nil {
				return errored(&result.Error{Category: session.ProtocolError, Message: "--strict: " + err.Error(),
					Hint: "the server breaks its own contract: a tool with an outputSchema must return structuredContent that conforms to it"})
			}
		}
	}
	return cr.judge(actx, t, p, o, a)
}

// judge turns the outcome of a sent step into the attempt's verdict: it builds the assertion
// subject, then checks the expected error (or an unexpected isError) and every assertion.
func (cr *colRun) judge(ctx context.Context, t *collection.Test, p *pool, o *outcome, a *attempt) *attempt {
	s, err := assert.NewSubject(o.kind, o.raw)
	if err != nil {
		a.res.Status, a.res.Error = result.Errored, &result.Error{Category: session.Malformed, Message: err.Error()}
		return a
	}
	s.Latency = o.latency
	s.Vars = cr.vars
	s.UpdateSnapshots = cr.r.opts.UpdateSnapshots
	if tc, ok := t.Step.(*collection.ToolCall); ok {
		s.OutputSchema = p.outputSchema(tc.Name(cr.vars))
	}
	a.subject = s

	var fails []result.Failure
	if t.ExpectError != nil {
		fails = append(fails, checkExpectError(t.ExpectError, o, s)...)
	} else if s.IsError() && !assertsIsError(t) && !isFrame(t) {
		fails = append(fails, result.Failure{Assertion: "isError", Path: "$.isError", Expected: "false", Actual: "true",
			Message: "the tool reported an error: " + cut(s.Text(), 500), Line: t.Pos.Line})
	}
	for _, as := range t.Assertions {
		if f := as.Checker.Check(ctx, s); f != nil {
			if f.Line == 0 {
				f.Line = as.Pos.Line
			}
			fails = append(fails, *f)
		}
	}
	fails = append(fails, cr.checkMessages(ctx, t, a.messages)...)
	if a.messagesDropped > 0 && t.WantsMessages() {
		fails = append(fails, result.Failure{Assertion: "messages", Line: t.Pos.Line,
			Message: fmt.Sprintf("the server sent more than %d notifications and requests during the step; %d were not kept, so counts may be short", serverconn.MaxInbox, a.messagesDropped)})
	}
	a.res.Failures = fails
	a.res.Status = result.Passed
	if len(fails) > 0 {
		a.res.Status = result.Failed
	}
	return a
}

// checkExpectError checks an expected error against what came back.
func checkExpectError(want *collection.ExpectError, o *outcome, s *assert.Subject) []result.Failure {
	fail := func(expected, actual, format string, args ...any) []result.Failure {
		return []result.Failure{{Assertion: "expectError", Expected: expected, Actual: actual,
			Message: fmt.Sprintf(format, args...), Line: want.Pos.Line}}
	}
	switch {
	case o.rpcErr == nil && !s.IsError():
		return fail("an error", cut(s.Text(), 200), "expected an error, but the request succeeded")
	case want.Code != 0 && o.rpcErr == nil:
		return fail(fmt.Sprintf("JSON-RPC error %d", want.Code), "a tool error (isError)",
			"expected JSON-RPC error %d, got a tool result with isError", want.Code)
	case want.Code != 0 && o.rpcErr.Code != want.Code:
		return fail(fmt.Sprintf("code %d", want.Code), fmt.Sprintf("code %d", o.rpcErr.Code),
			"expected JSON-RPC error %d, got %d: %s", want.Code, o.rpcErr.Code, o.rpcErr.Message)
	}
	if want.Message != "" {
		msg := s.Text()
		if o.rpcErr != nil {
			msg = o.rpcErr.Message
		}
		if !strings.Contains(msg, want.Message) {
			return fail(want.Message, cut(msg, 200), "the error message does not contain %q", want.Message)
		}
	}
	return nil
}

// isFrame reports whether t sends a raw frame, whose JSON-RPC error answer is graceful.
func isFrame(t *collection.Test) bool {
	_, ok := t.Step.(*collection.Frame)
	return ok
}

// assertsIsError reports whether the test checks isError itself.
func assertsIsError(t *collection.Test) bool {
	for _, a := range t.Assertions {
		if strings.EqualFold(a.Spec.Type, "isError") {
			return true
		}
	}
	return false
}

// stderrExcerpt is what the server wrote to stderr during a test (or its recent tail).
func stderrExcerpt(c *conn, offset int64) string {
	if c.StderrPath != "" {
		return serverconn.ReadTail(c.StderrPath, offset, MaxStderrExcerpt)
	}
	if c.Process != nil {
		return cut(c.Process.StderrTail(), MaxStderrExcerpt)
	}
	return ""
}
