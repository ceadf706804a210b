package archtest

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// module is the main module's path.
const module = "github.com/mcpspec/mcpspec"

// goCmd runs the go command in dir with extra environment and returns its stdout; a failure
// fails the test with its stderr.
func goCmd(t *testing.T, timeout time.Duration, dir string, env []string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(cmd.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go %s (in %s): %v\n%s%s", strings.Join(args, " "), dir, err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes()
}

// root returns the main module's directory.
func root(t *testing.T) string {
	t.Helper()
	gomod := strings.TrimSpace(string(goCmd(t, time.Minute, ".", nil, "env", "GOMOD")))
	if filepath.Base(gomod) != "go.mod" {
		t.Fatalf("go env GOMOD = %q: not in a module", gomod)
	}
	return filepath.Dir(gomod)
}
