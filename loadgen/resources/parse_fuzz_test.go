package resources

import (
	"bytes"
	"testing"

	"github.com/prometheus/common/expfmt"
)

// FuzzParse feeds arbitrary bytes to what reads a /metrics answer and cgroup files: any input
// is an error or a reading, never a panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte("# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes{a=\"1\"} 1e6\nprocess_cpu_seconds_total 3\n"))
	f.Add([]byte("usage_usec 2000000\nuser_usec 1\n"))
	f.Add([]byte("process_open_fds NaN\nprocess_open_fds +Inf\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		fams, err := decodeFamilies(bytes.NewReader(b), expfmt.FmtText)
		if err == nil {
			for _, fam := range fams {
				if _, n, ok := sum(fam); ok != (n > 0) {
					t.Fatalf("sum of %s: %d series, ok %v", fam.GetName(), n, ok)
				}
			}
		}
		statField(b, "usage_usec")
		if n := countLines(b); n < 0 || n > len(b) {
			t.Fatalf("countLines = %d for %d bytes", n, len(b))
		}
	})
}
