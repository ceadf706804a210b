package ui_test

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mcpspec/mcpspec/internal/cli"
)

// TestMain makes this test binary also act as mcpspec (found on PATH as "mcpspec"), which runs
// the built-in testserver for the UI's sessions and runs.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"mcpspec": cli.Main})
}
