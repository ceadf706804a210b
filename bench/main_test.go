//go:build unix

package bench

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/mcpspec/mcpspec/internal/testparallel"
)

// The mcpspec binary is built once per test binary, on first use, into a directory removed by
// TestMain.
var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

func TestMain(m *testing.M) {
	// The mcpspec runs started here keep no run history in the package's directory.
	os.Setenv("MCPSPEC_NO_HISTORY", "1")
	// The smoke tests run tiny counts against child servers and wait on them far more than
	// they compute: let four overlap.
	testparallel.Raise(4)
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binEnv names a prebuilt mcpspec binary to use instead (e.g. one with the load engine, for
// TestTruthSmoke).
const binEnv = "MCPBENCH_MCPSPEC"

// binary returns the built mcpspec binary, building it the first time.
func binary(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv(binEnv); p != "" {
		return p
	}
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "mcpbench-test-")
		if binErr != nil {
			return
		}
		binPath, binErr = Build(context.Background(), binDir)
	})
	if binErr != nil {
		tb.Fatal(binErr)
	}
	return binPath
}
