package cli

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/mcpspec/mcpspec/loadgen"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

func TestLoadFileNeed(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  loadgen.Config
		t    spec.Transport
		want int
	}{
		{"shared http closed", loadgen.Config{Concurrency: 100}, spec.HTTP, 1 + 100 + fdReserve},
		{"pooled http closed", loadgen.Config{SessionMode: loadgen.Pooled, Sessions: 10000, Concurrency: 10}, spec.Auto, 10000 + 10 + fdReserve},
		{"pooled http open", loadgen.Config{SessionMode: loadgen.Pooled, Sessions: 10000, Rate: 500}, spec.HTTP, 10000 + fdReserve},
		{"pooled stdio", loadgen.Config{SessionMode: loadgen.Pooled, Sessions: 1000, Concurrency: 10}, spec.Stdio, 4000 + fdReserve},
		{"per-iteration stdio", loadgen.Config{SessionMode: loadgen.PerIteration, Concurrency: 50}, spec.Stdio, 200 + fdReserve},
		{"default workers", loadgen.Config{SessionMode: loadgen.Pooled, Sessions: 1000}, spec.HTTP, 1000 + loadgen.DefaultConcurrency + fdReserve},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := loadFileNeed(&tc.cfg, tc.t); got != tc.want {
				t.Errorf("loadFileNeed = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestCheckFileLimit(t *testing.T) {
	if _, _, ok := fileLimit(); !ok {
		t.Skip("no RLIMIT_NOFILE here")
	}
	if err := checkFileLimit(10, "x"); err != nil {
		t.Errorf("10 descriptors refused: %v", err)
	}
	err := checkFileLimit(math.MaxInt32, "--sessions 1 over http")
	var e *Error
	if !errors.As(err, &e) || e.Code != ExitConfig || !strings.Contains(e.Msg, "--sessions 1 over http need about 2147483647 file descriptors") || !strings.Contains(e.Hint, "ulimit -n 2147483647") {
		t.Errorf("got %#v", err)
	}
}
