package runner

import (
	"context"
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/mcpspec/mcpspec/assert"
	"github.com/mcpspec/mcpspec/detect/fuzz"
	"github.com/mcpspec/mcpspec/session"
)

// frame sends a raw frame (a `frame:` step) and judges it as the fuzzer does: an answer, a
// JSON-RPC error or no answer passes, and so does a session the server ended cleanly after a
// frame the rules let it refuse; a crash, a hang or a malformed answer fails the test.
func (o *outcome) frame(ctx context.Context, s *session.Session, data []byte, timeout time.Duration) *outcome {
	o.method = "(frame)"
	var env struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(data, &env) == nil && env.Method != "" {
		o.method = env.Method
	}
	if utf8.Valid(data) {
		o.request = string(data)
	} else {
		o.request = map[string]any{"bytes": data}
	}
	if dl, ok := ctx.Deadline(); ok {
		// The test's own timeout may be the shorter: wait no longer, so a hang is named by it.
		timeout = min(timeout, time.Until(dl)-100*time.Millisecond)
	}
	v := fuzz.ReplayFrame(ctx, s, data, max(timeout, time.Millisecond))
	o.broken = v.Lost
	switch {
	case v.Bug():
		cat := session.Crash
		switch v.Outcome {
		case fuzz.Hang:
			cat = session.Timeout
		case fuzz.Malformed:
			cat = session.Malformed
		}
		o.err = &session.Error{Category: cat, Method: o.method, Message: string(v.Outcome) + ": " + v.Detail, Err: v.Err}
	case v.Rejection != nil:
		doc := map[string]any{"code": v.Rejection.Code, "message": v.Rejection.Message}
		o.kind, o.rpcErr = assert.KindError, v.Rejection
		o.raw, _ = json.Marshal(map[string]any{"error": doc})
	case v.Result != nil:
		o.raw = v.Result
	default:
		o.raw = json.RawMessage("null")
	}
	return o
}
