package leak_test

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/leak"
)

// FuzzAnalyze: any readings give a verdict with a reason, never a panic.
func FuzzAnalyze(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24}, int64(0))
	f.Add(make([]byte, 24*20), int64(time.Second))
	f.Fuzz(func(t *testing.T, b []byte, warm int64) {
		var pts []leak.Point
		for len(b) >= 24 {
			pts = append(pts, leak.Point{
				T:     time.Duration(binary.LittleEndian.Uint64(b)),
				Bytes: math.Float64frombits(binary.LittleEndian.Uint64(b[8:])),
				Calls: int64(binary.LittleEndian.Uint64(b[16:])),
			})
			b = b[24:]
		}
		r := leak.Analyze(pts, &leak.Options{Warmup: time.Duration(warm)})
		switch r.Verdict {
		case leak.Leak, leak.NoLeak, leak.Indeterminate:
		default:
			t.Fatalf("verdict %q", r.Verdict)
		}
		if r.Reason == "" {
			t.Fatal("no reason")
		}
	})
}
