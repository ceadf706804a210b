package leak_test

import (
	"fmt"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/leak"
)

// A server that keeps 16 KiB per call at 200 calls/s, sampled once a second for two minutes.
func ExampleAnalyze() {
	var pts []leak.Point
	for s := range 120 {
		calls := int64(s * 200)
		pts = append(pts, leak.Point{T: time.Duration(s) * time.Second, Bytes: 40e6 + float64(calls)*16*1024, Calls: calls})
	}
	r := leak.Analyze(pts, nil)
	fmt.Printf("%s: %.1f MiB/s, R² %.2f, %.0f KiB per call\n", r.Verdict, r.MBPerSec(), r.R2, r.KBPerCall())
	// Output: leak: 3.1 MiB/s, R² 1.00, 16 KiB per call
}
