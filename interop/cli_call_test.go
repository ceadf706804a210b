package interop

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// TestCallUnknownToolNamesTheTools: server-everything answers an unknown tool with a tool error
// (isError), not -32602; `mcpspec call` still says the tool does not exist and lists those
// that do, instead of "the tool failed".
func TestCallUnknownToolNamesTheTools(t *testing.T) {
	t.Parallel()
	p := requireNodePeer(t, everythingPkg)
	exe := buildMcpspec(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "call", "--server", spec.Join([]string{p.node, p.entry, "stdio"}), "no-such-tool")
	cmd.Env = peerEnv()
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit = %v, want 1\n%s\n%s", err, stdout.String(), stderr.String())
	}
	for _, want := range []string{
		`(?m)^Error: tool "no-such-tool" not found \(the server answered with a tool error\)$`,
		`(?m)^Hint: available: .*\becho\b`,
	} {
		if !regexp.MustCompile(want).MatchString(stderr.String()) {
			t.Errorf("stderr does not match %s:\n%s", want, stderr.String())
		}
	}
}
