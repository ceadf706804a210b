package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/golden"
	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/session"
)

// goldenOps are the operations of the fixed event sequence: every kind, and names that need
// escaping.
var goldenOps = []metrics.Op{
	{Name: "echo", Kind: metrics.KindTool},
	{Name: "login", Kind: metrics.KindTest},
	{Name: "ramp up", Kind: metrics.KindPhase},
	{Name: "initialize", Kind: metrics.KindSession},
	{Name: "quo\"te\\back\nline\x01\u2028é\xff", Kind: metrics.KindTool},
	{Name: "", Kind: metrics.KindTool},
}

// goldenSequence writes a fixed, seeded sequence of events to w: every field, edge values
// (negative and zero durations, huge ids, messages over the clip length) and random ones.
func goldenSequence(w *Writer) {
	long := strings.Repeat("é", 300) // 600 bytes: clipped inside a rune
	cats := []result.Category{"", "", "", session.ServerError, session.Hang, session.Deadlock, session.Timeout, session.Crash}
	msgs := []string{"", "late", "bad \"thing\"\n\x01\xff", long, "$.x: want 1", "secret-ish tail"}
	fixed := []metrics.Sample{
		{},
		{ID: -1, Worker: -3, Intended: -time.Second, Sent: -1500 * time.Microsecond, Done: -1},
		{ID: 1<<63 - 1, Worker: 1<<31 - 1, Intended: 1<<63 - 1, Sent: 1<<63 - 1, Done: 1<<63 - 1},
		{ID: 9, Done: 999_999 * time.Microsecond, Intended: 1_000_001 * time.Microsecond},
		{ID: 10, Done: 1234 * time.Nanosecond, Sent: 999 * time.Nanosecond},
		{ID: 11, Done: 3 * time.Second, ToolError: true},
		{ID: 12, Done: 3 * time.Second, ToolError: true, Msg: "tool said no"},
		{ID: 13, Done: 3 * time.Second, Failed: true, Msg: long},
		{ID: 14, Done: 3 * time.Second, Category: session.ServerError, Code: -32603, Msg: long},
		{ID: 15, Done: 3 * time.Second, Category: session.Hang, ToolError: true, Failed: true},
	}
	for i, s := range fixed {
		w.Call(&s, goldenOps[i%len(goldenOps)])
	}
	w.Process(1500*time.Millisecond, metrics.ResourceSample{RSSMB: 45.25, CPUPct: 12.5, FDs: 9, Threads: 4})
	w.Process(0, metrics.ResourceSample{RSSMB: 0.0004, CPUPct: 199.999})
	w.Process(-time.Millisecond, metrics.ResourceSample{RSSMB: 123456.789, CPUPct: -1, FDs: -1, Threads: 1})
	w.Scenario(0, "stage", "stage 1: 400/s")
	w.Scenario(time.Hour, "quo\"te", long)
	w.Scenario(time.Minute, "", "")

	r := rand.New(rand.NewPCG(20, 4))
	var at time.Duration
	for i := range 400 {
		at += time.Duration(r.IntN(5000)) * time.Microsecond / 7
		switch r.IntN(20) {
		case 0:
			w.Process(at, metrics.ResourceSample{RSSMB: r.Float64() * 500, CPUPct: r.Float64() * 200, FDs: r.IntN(3) * r.IntN(100), Threads: r.IntN(3) * r.IntN(50)})
			continue
		case 1:
			w.Scenario(at, "snapshot", msgs[r.IntN(len(msgs))])
			continue
		}
		op := r.IntN(len(goldenOps))
		s := metrics.Sample{
			Op:       int32(op),
			Worker:   int32(r.IntN(64)),
			ID:       int64(i + 1),
			Intended: at,
			Sent:     at + time.Duration(r.IntN(3000)),
			Category: cats[r.IntN(len(cats))],
			Failed:   r.IntN(10) == 0,
		}
		if r.IntN(10) == 0 {
			s.ID = 0
		}
		s.Done = s.Sent + time.Duration(r.Int64N(int64(2*time.Second)))
		if s.Category != "" {
			s.Msg = msgs[r.IntN(len(msgs))]
			if r.IntN(2) == 0 {
				s.Code = int32(-32000 - r.IntN(700))
			}
		} else if r.IntN(8) == 0 {
			s.ToolError = true
			s.Msg = msgs[r.IntN(len(msgs))]
		} else if s.Failed {
			s.Msg = msgs[r.IntN(len(msgs))]
		}
		w.Call(&s, goldenOps[op])
	}
}

// TestGolden keeps the trace byte for byte what it was: a fixed event sequence against
// testdata/golden.jsonl.
func TestGolden(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	goldenSequence(w)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if w.Count() != 416 {
		t.Errorf("count %d, want 416", w.Count())
	}
	golden.Check(t, filepath.Join("testdata", "golden.jsonl"), buf.Bytes())

	// Every line is one JSON object that encoding/json reads.
	sc := bufio.NewScanner(&buf)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		n++
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d %q: %v", n, sc.Text(), err)
		}
		if _, ok := m["kind"].(string); !ok {
			t.Errorf("line %d has no kind: %s", n, sc.Text())
		}
	}
	if n != 416 {
		t.Errorf("%d lines, want 416", n)
	}
}
