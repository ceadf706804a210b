//go:build !unix

package trace

import (
	"testing"
	"time"
)

// cpuTime is 0 where getrusage is missing: the cpu-ns/event metric then reads 0.
func cpuTime(*testing.B) time.Duration { return 0 }
