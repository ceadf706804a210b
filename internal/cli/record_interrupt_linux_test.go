//go:build linux

package cli

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/session/recording"
)

// statelessCall is a tools/call that needs no handshake (2026-07-28 era).
func statelessCall(id, tool, args string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}},"name":"` + tool + `","arguments":` + args + `}}` + "\n"
}

// TestProxyInterruptFlushes interrupts a stdio proxy whose client keeps its input open while
// a call is in flight: the proxy exits 130 at once, the recording holds every frame that
// passed, and the server process is gone.
func TestProxyInterruptFlushes(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			exe, err := exec.LookPath("mcpspec")
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			var b [8]byte
			_, _ = rand.Read(b[:])
			p := &mcpspecProc{marker: hex.EncodeToString(b[:]), exited: make(chan struct{})}
			p.cmd = exec.Command(exe, "proxy", "--server", "testserver", "--name", "int", "--dir", dir)
			p.cmd.Env = append(os.Environ(), markerEnv+"="+p.marker)
			stdin, err := p.cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
			p.cmd.WaitDelay = 5 * time.Second
			p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			if err := p.cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { p.err = p.cmd.Wait(); close(p.exited) }()
			t.Cleanup(func() {
				select {
				case <-p.exited:
				default:
					_ = p.cmd.Process.Kill()
					<-p.exited
				}
			})
			io.WriteString(stdin, statelessCall("1", "echo", `{"text":"before"}`))
			p.waitOutput(t, 20*time.Second, "the echo answer", func(stdout, _ string) bool { return strings.Contains(stdout, `"text":"before"`) })
			io.WriteString(stdin, statelessCall("2", "slow", `{"milliseconds":60000}`))
			// The slow call is in flight once the recording has it.
			path := filepath.Join(dir, "int.jsonl")
			p.waitOutput(t, 20*time.Second, "the slow call recorded", func(string, string) bool {
				b, _ := os.ReadFile(path)
				return strings.Contains(string(b), `"name":"slow"`)
			})
			p.signal(t, sig)
			if code := p.wait(t, 10*time.Second); code != int(ExitInterrupted) {
				t.Errorf("exit %d, want 130\nstderr:\n%s", code, p.stderr.String())
			}
			p.assertNoLeftovers(t)
			rec, err := recording.ReadFile(path, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.Entries) != 3 || rec.Header.ProtocolVersion != "2026-07-28" {
				t.Errorf("recording after %v: %d frames (want the echo, its answer and the slow call), header %+v", sig, len(rec.Entries), rec.Header)
			}
		})
	}
}
