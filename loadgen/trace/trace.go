package trace

import (
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/mcpspec/mcpspec/internal/jsonscan"
	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/session"
)

// Kinds of trace events.
const (
	KindResponse = "response"
	KindError    = "error"
	KindHang     = "hang"
	KindDeadlock = "deadlock"
	// KindProcess is a sample of the server's resources.
	KindProcess = "process_sample"
	// KindScenario marks a run event: a stage began, the in-flight cap was reached, a snapshot.
	KindScenario = "scenario_event"
)

// maxMessage bounds an error message in the trace.
const maxMessage = 512

// bufSize is the writer's buffer: it writes to the underlying writer when it holds more
// than flushAt bytes, so a write carries thousands of events.
const (
	bufSize = 1 << 20
	flushAt = bufSize - 8<<10
)

// Writer writes trace events. It is not safe for concurrent use: the load engine writes from
// its aggregator, one batch at a time.
//
// It encodes each event straight into its one buffer: the constant parts of a line are
// pre-encoded (the kinds, and per operation its name with the keys around it, see [Writer.Call]),
// numbers are written digit by digit, and strings go through [jsonscan.AppendString].
type Writer struct {
	w   io.Writer
	buf []byte
	// ops caches each operation's encoded fragment by its index in the run's table
	// (metrics.Sample.Op), with the Op it was made from.
	ops []opFragment
	n   int64
	err error
}

// opFragment is an operation's part of a call's line: `,"method":"tools/call","tool":"echo"`
// then `,"worker":`.
type opFragment struct {
	op  metrics.Op
	enc []byte
}

// NewWriter returns a writer to w with a 1 MiB buffer.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, buf: make([]byte, 0, bufSize)}
}

// Count returns the events written so far.
func (w *Writer) Count() int64 { return w.n }

// Call writes the event of one finished request: "response" (with is_error for a tool error,
// assertion for a failed assertion), or "error", "hang" or "deadlock" with the fault. op is
// the operation at index s.Op of the run's table; its encoding is made once and reused.
func (w *Writer) Call(s *metrics.Sample, op metrics.Op) {
	b := appendSeconds(append(w.buf, `{"ts":`...), s.Done)
	b = append(b, callKind(s)...)
	if s.ID != 0 {
		b = append(b, `,"request_id":`...)
		b = strconv.AppendInt(b, s.ID, 10)
	}
	b = append(b, w.fragment(s.Op, op)...)
	b = strconv.AppendInt(b, int64(s.Worker), 10)
	b = append(b, `,"intended_ts":`...)
	b = appendSeconds(b, s.Intended)
	b = append(b, `,"sent_ts":`...)
	b = appendSeconds(b, s.Sent)
	b = append(b, `,"duration_ms":`...)
	b = appendMillis(b, s.Latency())
	b = append(b, `,"service_ms":`...)
	b = appendMillis(b, s.Service())
	if s.ToolError {
		b = append(b, `,"is_error":true`...)
	}
	if s.Category != "" {
		b = append(b, `,"error":{"category":`...)
		b = jsonscan.AppendString(b, string(s.Category))
		b = append(b, `,"message":`...)
		b = jsonscan.AppendString(b, clip(s.Msg))
		if s.Code != 0 {
			b = append(b, `,"code":`...)
			b = strconv.AppendInt(b, int64(s.Code), 10)
		}
		b = append(b, '}')
	} else if s.Failed || (s.ToolError && s.Msg != "") {
		b = append(b, `,"assertion":`...)
		b = jsonscan.AppendString(b, clip(s.Msg))
	}
	w.end(b)
}

// fragment returns op's encoded fragment, cached at index i (the sample's Op) while the
// operation there stays the same.
func (w *Writer) fragment(i int32, op metrics.Op) []byte {
	if i >= 0 && int(i) < len(w.ops) && w.ops[i].op == op {
		return w.ops[i].enc
	}
	var b []byte
	switch op.Kind {
	case metrics.KindTool:
		b = append(b, `,"method":"tools/call","tool":`...)
		b = jsonscan.AppendString(b, op.Name)
	default:
		b = append(b, `,"`...)
		b = append(b, op.Kind...)
		b = append(b, `":`...)
		b = jsonscan.AppendString(b, op.Name)
	}
	b = append(b, `,"worker":`...)
	if i >= 0 && i < 1<<16 {
		for int(i) >= len(w.ops) {
			w.ops = append(w.ops, opFragment{})
		}
		w.ops[i] = opFragment{op: op, enc: b}
	}
	return b
}

// callKind is the kind of a call's event, with the key before it.
func callKind(s *metrics.Sample) string {
	switch s.Category {
	case "":
		return kindResponse
	case session.Hang:
		return kindHang
	case session.Deadlock:
		return kindDeadlock
	}
	return kindError
}

// The kinds as they follow the ts.
const (
	kindResponse = `,"kind":"` + KindResponse + `"`
	kindError    = `,"kind":"` + KindError + `"`
	kindHang     = `,"kind":"` + KindHang + `"`
	kindDeadlock = `,"kind":"` + KindDeadlock + `"`
	kindProcess  = `,"kind":"` + KindProcess + `"`
	kindScenario = `,"kind":"` + KindScenario + `"`
)

// Process writes a sample of the server's resources.
func (w *Writer) Process(at time.Duration, r metrics.ResourceSample) {
	b := appendSeconds(append(w.buf, `{"ts":`...), at)
	b = append(b, kindProcess...)
	b = append(b, `,"rss_mb":`...)
	b = strconv.AppendFloat(b, r.RSSMB, 'f', 3, 64)
	b = append(b, `,"cpu_pct":`...)
	b = strconv.AppendFloat(b, r.CPUPct, 'f', 2, 64)
	if r.FDs > 0 {
		b = append(b, `,"fds":`...)
		b = strconv.AppendInt(b, int64(r.FDs), 10)
	}
	if r.Threads > 0 {
		b = append(b, `,"threads":`...)
		b = strconv.AppendInt(b, int64(r.Threads), 10)
	}
	w.end(b)
}

// Scenario writes a run event: name says what happened ("stage", "cap_reached", "snapshot",
// "interrupted"), message says it in words.
func (w *Writer) Scenario(at time.Duration, name, message string) {
	b := appendSeconds(append(w.buf, `{"ts":`...), at)
	b = append(b, kindScenario...)
	b = append(b, `,"event":`...)
	b = jsonscan.AppendString(b, name)
	b = append(b, `,"message":`...)
	b = jsonscan.AppendString(b, clip(message))
	w.end(b)
}

// end closes the line in b (the buffer with the line appended) and writes the buffer on when
// it is full enough.
func (w *Writer) end(b []byte) {
	b = append(b, '}', '\n')
	if w.err != nil {
		w.buf = b[:0]
		return
	}
	w.n++
	w.buf = b
	if len(b) >= flushAt {
		w.writeOut()
	}
}

// writeOut writes the buffer to the underlying writer and empties it.
func (w *Writer) writeOut() {
	if len(w.buf) == 0 || w.err != nil {
		return
	}
	if _, err := w.w.Write(w.buf); err != nil {
		w.err = fmt.Errorf("write trace: %w", err)
	}
	w.buf = w.buf[:0]
}

// Flush writes what is buffered and returns the first error of any write.
func (w *Writer) Flush() error {
	w.writeOut()
	return w.err
}

// appendSeconds writes d in seconds with microsecond precision.
func appendSeconds(b []byte, d time.Duration) []byte {
	if d < 0 {
		b = append(b, '-')
		d = -d
	}
	us := uint64(d / time.Microsecond)
	b = appendUint(b, us/1e6)
	b = append(b, '.')
	return appendDigits(b, us%1e6, 6)
}

// appendMillis writes d in milliseconds with microsecond precision.
func appendMillis(b []byte, d time.Duration) []byte {
	if d < 0 {
		b = append(b, '-')
		d = -d
	}
	us := uint64(d / time.Microsecond)
	b = appendUint(b, us/1000)
	b = append(b, '.')
	return appendDigits(b, us%1000, 3)
}

// appendUint writes v in decimal; small values, the common case, without a call into strconv.
func appendUint(b []byte, v uint64) []byte {
	if v < 10 {
		return append(b, byte('0'+v))
	}
	if v < 100 {
		return append(b, byte('0'+v/10), byte('0'+v%10))
	}
	return strconv.AppendUint(b, v, 10)
}

// appendDigits writes the width last decimal digits of v, zero-padded.
func appendDigits(b []byte, v uint64, width int) []byte {
	n := len(b)
	b = append(b, "000000"[:width]...)
	for i := n + width - 1; i >= n && v > 0; i-- {
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return b
}

func clip(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
