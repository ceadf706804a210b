package runner

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/assert"
	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/session"
)

// LoadOutcome is what one collection test did when run as load: the request's failure, a tool
// error the test did not expect, or its first failed assertion.
type LoadOutcome struct {
	// Err is the request's failure (classified by session.CategoryOf).
	Err error
	// ToolError marks an isError result the test did not expect.
	ToolError bool
	// Failed marks failed assertions; Msg is the first one's message.
	Failed bool
	Msg    string
}

// LoadStep returns t as a load workload step: each call sends the test's step on s with the
// collection's variables (vars; extraction between tests does not happen under load) and checks
// its assertions, as `mcpspec test` would, but without retries and without updating snapshots.
// outputSchema, if not nil, gives a tool's advertised outputSchema for schema assertions.
func LoadStep(t *collection.Test, vars *collection.Vars, callTimeout time.Duration, outputSchema func(tool string) json.RawMessage) func(ctx context.Context, s *session.Session) LoadOutcome {
	return func(ctx context.Context, s *session.Session) LoadOutcome {
		o := send(ctx, s, t.Step, vars, sendOptions{callTimeout: callTimeout})
		switch {
		case o.varErr != nil:
			return LoadOutcome{Failed: true, Msg: "expand variables: " + o.varErr.Error()}
		case o.err != nil && (o.rpcErr == nil || t.ExpectError == nil):
			return LoadOutcome{Err: o.err}
		}
		subj, err := assert.NewSubject(o.kind, o.raw)
		if err != nil {
			return LoadOutcome{Err: &session.Error{Category: session.Malformed, Message: err.Error()}}
		}
		subj.Latency = o.latency
		subj.Vars = vars
		if tc, ok := t.Step.(*collection.ToolCall); ok && outputSchema != nil {
			subj.OutputSchema = outputSchema(tc.Name(vars))
		}
		var fails []result.Failure
		if t.ExpectError != nil {
			fails = checkExpectError(t.ExpectError, o, subj)
		} else if subj.IsError() && !assertsIsError(t) {
			return LoadOutcome{ToolError: true, Msg: "isError: " + cut(subj.Text(), 200)}
		}
		for _, as := range t.Assertions {
			if f := as.Checker.Check(ctx, subj); f != nil {
				fails = append(fails, *f)
			}
		}
		if len(fails) == 0 {
			return LoadOutcome{}
		}
		f := fails[0]
		msg := f.Message
		if f.Path != "" && !strings.Contains(msg, f.Path) {
			msg = f.Path + ": " + msg
		}
		return LoadOutcome{Failed: true, Msg: cut(vars.Masker().Mask(msg), 300)}
	}
}

// ExpandServer returns def with its variables expanded from vars (a load run reaches a
// collection's server the way its tests do).
func ExpandServer(def *collection.Server, vars *collection.Vars) (*collection.Server, error) {
	return expandServer(def, vars)
}
