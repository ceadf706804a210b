//go:build linux

package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/baseline/history"
	"github.com/mcpspec/mcpspec/internal/poll"
)

const watchCollection = `name: Watched
server: testserver
tests:
  - name: Echo
    call: echo
    with: {text: hello}
    expect: [contains: %s]
`

// TestWatchRerunsOnChange runs `mcpspec test --watch`, changes the collection so its test
// fails, waits for the second run to show the failure, then interrupts the idle watcher: the
// watch ends interrupted (exit 130, as docs/exit-codes.md says; it was 0) and leaves no server
// behind.
func TestWatchRerunsOnChange(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "w.yaml", fmt.Sprintf(watchCollection, "hello"))
	p := startMcpspec(t, dir, "test", "--watch", "w.yaml")

	p.waitOutput(t, 15*time.Second, "the first run and the watch notice", func(stdout, stderr string) bool {
		return strings.Contains(stdout, "PASS  1 test") && strings.Contains(stderr, "Watching 1 file for changes")
	})
	if err := os.WriteFile(file, []byte(fmt.Sprintf(watchCollection, "goodbye")), 0o644); err != nil {
		t.Fatal(err)
	}
	p.waitOutput(t, 15*time.Second, "the second run's failure and the next watch notice", func(stdout, stderr string) bool {
		return strings.Contains(stderr, "Change detected; running again.") &&
			strings.Contains(stdout, "FAIL  1 test") &&
			strings.Count(stderr, "Watching 1 file for changes") == 2
	})
	if !strings.Contains(p.stderr.String(), "1 of 1 test did not pass") {
		t.Errorf("the failed run's error is not shown while watching:\n%s", p.stderr.String())
	}
	p.signal(t, syscall.SIGINT)
	if code := p.wait(t, 10*time.Second); code != int(ExitInterrupted) {
		t.Errorf("exit code after Ctrl-C while watching = %d, want %d\nstderr:\n%s", code, ExitInterrupted, p.stderr.String())
	}
	assertNoPanic(t, p.stderr.String())
	p.assertNoLeftovers(t)
	// Each run of the watch is in the history, in order.
	var verdicts []string
	runs, _ := filepath.Glob(filepath.Join(dir, ".mcpspec", "runs", "test", "*"))
	for _, r := range runs {
		if h, err := history.ReadHeader(r); err == nil {
			verdicts = append(verdicts, h.Verdict)
		}
	}
	if strings.Join(verdicts, " ") != "pass fail" {
		t.Errorf("history of the watch: %v, want [pass fail]", verdicts)
	}
}

// TestWatchInterruptDuringRun interrupts a watched run while a call is in flight: that run's
// interruption is the result (exit 130) and its server is stopped.
func TestWatchInterruptDuringRun(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.log")
	writeFile(t, dir, "slow.yaml", fmt.Sprintf(interruptCollection, in))
	p := startMcpspec(t, dir, "test", "--watch", "slow.yaml", "--reporter", "json=out/r.json")
	poll.Until(t, 15*time.Second, "the slow call to reach the server", func() bool {
		b, _ := os.ReadFile(in)
		return strings.Contains(string(b), `"slow"`)
	})
	p.signal(t, syscall.SIGINT)
	if code := p.wait(t, 15*time.Second); code != int(ExitInterrupted) {
		t.Errorf("exit code = %d, want %d\nstderr:\n%s", code, ExitInterrupted, p.stderr.String())
	}
	assertNoPanic(t, p.stderr.String())
	p.assertNoLeftovers(t)
	checkInterruptedJSON(t, filepath.Join(dir, "out", "r.json"))
}
