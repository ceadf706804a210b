package trace

import (
	"bufio"
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

// Writer writes trace events. It is not safe for concurrent use: the load engine writes from
// its aggregator, one batch at a time.
type Writer struct {
	bw  *bufio.Writer
	buf []byte
	n   int64
	err error
}

// NewWriter returns a writer to w with a 1 MiB buffer.
func NewWriter(w io.Writer) *Writer {
	return &Writer{bw: bufio.NewWriterSize(w, 1<<20), buf: make([]byte, 0, 512)}
}

// Count returns the events written so far.
func (w *Writer) Count() int64 { return w.n }

// Call writes the event of one finished request: "response" (with is_error for a tool error,
// assertion for a failed assertion), or "error", "hang" or "deadlock" with the fault.
func (w *Writer) Call(s *metrics.Sample, op metrics.Op) {
	b := w.begin(s.Done, callKind(s))
	if s.ID != 0 {
		b = append(b, `,"request_id":`...)
		b = strconv.AppendInt(b, s.ID, 10)
	}
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

func callKind(s *metrics.Sample) string {
	switch s.Category {
	case "":
		return KindResponse
	case session.Hang:
		return KindHang
	case session.Deadlock:
		return KindDeadlock
	}
	return KindError
}

// Process writes a sample of the server's resources.
func (w *Writer) Process(at time.Duration, r metrics.ResourceSample) {
	b := w.begin(at, KindProcess)
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
	b := w.begin(at, KindScenario)
	b = append(b, `,"event":`...)
	b = jsonscan.AppendString(b, name)
	b = append(b, `,"message":`...)
	b = jsonscan.AppendString(b, clip(message))
	w.end(b)
}

func (w *Writer) begin(at time.Duration, kind string) []byte {
	b := append(w.buf[:0], `{"ts":`...)
	b = appendSeconds(b, at)
	b = append(b, `,"kind":"`...)
	b = append(b, kind...)
	b = append(b, '"')
	return b
}

func (w *Writer) end(b []byte) {
	b = append(b, '}', '\n')
	w.buf = b
	if w.err != nil {
		return
	}
	if _, err := w.bw.Write(b); err != nil {
		w.err = fmt.Errorf("write trace: %w", err)
		return
	}
	w.n++
}

// Flush writes what is buffered and returns the first error of any write.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if err := w.bw.Flush(); err != nil {
		w.err = fmt.Errorf("write trace: %w", err)
	}
	return w.err
}

// appendSeconds writes d in seconds with microsecond precision.
func appendSeconds(b []byte, d time.Duration) []byte {
	if d < 0 {
		b = append(b, '-')
		d = -d
	}
	us := int64(d / time.Microsecond)
	b = strconv.AppendInt(b, us/1e6, 10)
	b = append(b, '.')
	return appendPadded(b, us%1e6, 6)
}

// appendMillis writes d in milliseconds with microsecond precision.
func appendMillis(b []byte, d time.Duration) []byte {
	if d < 0 {
		b = append(b, '-')
		d = -d
	}
	us := int64(d / time.Microsecond)
	b = strconv.AppendInt(b, us/1000, 10)
	b = append(b, '.')
	return appendPadded(b, us%1000, 3)
}

func appendPadded(b []byte, v int64, width int) []byte {
	var tmp [20]byte
	s := strconv.AppendInt(tmp[:0], v, 10)
	for range width - len(s) {
		b = append(b, '0')
	}
	return append(b, s...)
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
