package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/session"
)

// Workload is what iterations do: one weighted [Entry] is picked per iteration.
type Workload struct {
	Entries []Entry
}

// Entry is one weighted choice: a sequence of steps (one for a tool call or a test, several
// for a pattern).
type Entry struct {
	// Name names a pattern ("" for single steps: the step names it).
	Name   string
	Weight float64
	Steps  []Step
}

// OnError says what a pattern does after a failed step.
type OnError string

// The error behaviours of a pattern step.
const (
	// Continue goes on with the next step (the default).
	Continue OnError = "continue"
	// Abort ends the iteration.
	Abort OnError = "abort"
	// Retry tries the step once more, then goes on.
	Retry OnError = "retry"
)

// Step is one request of an iteration.
type Step struct {
	// Name names the operation in the metrics (the tool, or the test's name).
	Name string
	// Kind is tool (Tool and Args are sent as tools/call) or test (Do is called).
	Kind metrics.OpKind
	// Tool and Args are a tools/call; Args is a JSON object (nil: {}).
	Tool string
	Args json.RawMessage
	// Do runs a custom step (a collection test with its assertions) on a session.
	Do func(ctx context.Context, s *session.Session) Outcome
	// Think is the pause after the step.
	Think   time.Duration
	OnError OnError

	// tail is the pre-encoded legacy-era request after the id.
	tail []byte
}

// Outcome is what a custom step reports.
type Outcome struct {
	// Err is the failure of the request (its category is read with session.CategoryOf).
	Err error
	// ToolError marks a tool result with isError.
	ToolError bool
	// Failed marks failed assertions; Msg says which.
	Failed bool
	Msg    string
	// ID is the request's JSON-RPC id, if known.
	ID int64
}

// ToolCall returns a one-step entry calling tool with args (a JSON object; nil for none).
func ToolCall(tool string, args json.RawMessage, weight float64) Entry {
	return Entry{Weight: weight, Steps: []Step{{Name: tool, Kind: metrics.KindTool, Tool: tool, Args: args}}}
}

func (w *Workload) validate() error {
	total := 0.0
	for i := range w.Entries {
		e := &w.Entries[i]
		if e.Weight < 0 {
			return configErr("workload entry %d has a negative weight", i+1)
		}
		total += e.Weight
		if len(e.Steps) == 0 {
			return configErr("workload entry %d has no steps", i+1)
		}
		for j := range e.Steps {
			st := &e.Steps[j]
			if st.Kind == "" {
				st.Kind = metrics.KindTool
			}
			if st.Name == "" {
				st.Name = st.Tool
			}
			if st.Kind == metrics.KindTool {
				if st.Tool == "" {
					return configErr("workload entry %d step %d names no tool", i+1, j+1)
				}
				args := bytes.TrimSpace(st.Args)
				if len(args) == 0 {
					args = []byte("{}")
				}
				if !json.Valid(args) || args[0] != '{' {
					return configErr("arguments of %s are not a JSON object: %s", st.Tool, clipBytes(args))
				}
				st.Args = args
				st.tail = encodeTail(st.Tool, args)
			} else if st.Do == nil {
				return configErr("workload step %q has nothing to do", st.Name)
			}
			if st.OnError == "" {
				st.OnError = Continue
			}
		}
	}
	if total <= 0 {
		return configErr("the workload's weights add up to 0")
	}
	return nil
}

func clipBytes(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}

// opTable assigns operation indexes.
type opTable struct {
	ops []metrics.Op
	idx map[metrics.Op]int32
}

func (t *opTable) index(op metrics.Op) int32 {
	if t.idx == nil {
		t.idx = map[metrics.Op]int32{}
	}
	if i, ok := t.idx[op]; ok {
		return i
	}
	t.ops = append(t.ops, op)
	t.idx[op] = int32(len(t.ops) - 1)
	return t.idx[op]
}

// picker chooses entries by weight; each worker has its own (no lock).
type picker struct {
	cum []float64
	rng *rand.Rand
}

func newPicker(w *Workload, seed int64, worker int) *picker {
	p := &picker{rng: rand.New(rand.NewPCG(uint64(seed), uint64(worker)))}
	if w == nil {
		return p
	}
	total := 0.0
	for _, e := range w.Entries {
		total += e.Weight
		p.cum = append(p.cum, total)
	}
	return p
}

func (p *picker) pick() int {
	if len(p.cum) <= 1 {
		return 0
	}
	x := p.rng.Float64() * p.cum[len(p.cum)-1]
	for i, c := range p.cum {
		if x < c {
			return i
		}
	}
	return len(p.cum) - 1
}

// Pre-encoded request parts: the legacy era's tools/call is these bytes with the id between.
var rawHead = []byte(`{"jsonrpc":"2.0","id":`)

func encodeTail(tool string, args []byte) []byte {
	name, _ := json.Marshal(tool)
	b := append([]byte(`,"method":"tools/call","params":{"name":`), name...)
	b = append(b, `,"arguments":`...)
	b = append(b, args...)
	return append(b, "}}"...)
}

var isErrorTrue = []byte(`"isError":true`)

// call sends the step's tools/call on s and reports the outcome. In the legacy era the request
// is the pre-encoded frame with only the id patched in (session.RequestRaw); in the stateless
// era, whose requests carry per-request _meta and headers, it goes through CallTool.
func (st *Step) call(ctx context.Context, s *session.Session, timeout time.Duration, buf *[]byte) Outcome {
	if st.Do != nil {
		return st.Do(ctx, s)
	}
	if s.Era() == session.EraLegacy {
		id := s.NextID()
		b := append((*buf)[:0], rawHead...)
		b = strconv.AppendInt(b, id, 10)
		b = append(b, st.tail...)
		*buf = b
		resp, err := s.RequestRaw(ctx, id, b, timeout)
		if err != nil {
			return Outcome{Err: err, ID: id}
		}
		o := Outcome{ID: id}
		if bytes.Contains(resp.Result, isErrorTrue) {
			var r struct {
				IsError bool              `json:"isError"`
				Content []json.RawMessage `json:"content"`
			}
			if json.Unmarshal(resp.Result, &r) == nil && r.IsError {
				o.ToolError, o.Msg = true, toolErrorText(r.Content)
			}
		}
		return o
	}
	res, err := s.CallTool(ctx, st.Tool, st.Args, &session.CallOptions{Timeout: timeout})
	if err != nil {
		var se *session.Error
		o := Outcome{Err: err}
		if errors.As(err, &se) {
			o.ID = se.ID
		}
		return o
	}
	if res.IsError {
		return Outcome{ToolError: true, Msg: toolErrorText(res.Content)}
	}
	return Outcome{}
}

// toolErrorText is the first text content of an isError result.
func toolErrorText(content []json.RawMessage) string {
	for _, c := range content {
		var t struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(c, &t) == nil && t.Type == "text" {
			return "isError: " + t.Text
		}
	}
	return "isError"
}

// describe fills a failed sample from an outcome.
func (o *Outcome) fill(s *metrics.Sample) {
	s.ID = o.ID
	s.ToolError, s.Failed = o.ToolError, o.Failed
	s.Msg = o.Msg
	if o.Err != nil {
		s.Category = session.CategoryOf(o.Err)
		if s.Category == "" {
			s.Category = session.Disconnected
		}
		var se *session.Error
		if errors.As(o.Err, &se) {
			s.Code = int32(se.Code)
		}
		s.Msg = o.Err.Error()
	}
}

// String names an entry.
func (e *Entry) String() string {
	if e.Name != "" {
		return e.Name
	}
	if len(e.Steps) == 1 {
		return e.Steps[0].Name
	}
	return fmt.Sprintf("%d steps", len(e.Steps))
}
