//go:build unix

package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// MainPackage is the import path of the mcpspec command, built by [Build].
const MainPackage = "github.com/mcpspec/mcpspec/cmd/mcpspec"

// Build compiles the mcpspec command into dir and returns the binary's path. It runs the go
// tool, so it must run inside this module (as `go test` and `go run` do).
func Build(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "mcpspec")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, MainPackage)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("bench: build %s: %w\n%s", MainPackage, err, out)
	}
	return bin, nil
}

// StdioArgs are the arguments that make the mcpspec binary serve MCP on stdin/stdout.
var stdioArgs = []string{"testserver", "--transport", "stdio"}

// HTTPServer is `mcpspec testserver --transport http` running as a child process.
type HTTPServer struct {
	// URL is the Streamable HTTP endpoint the server printed.
	URL string

	cmd    *exec.Cmd
	waited chan struct{}
}

// startTimeout bounds how long a child server may take to print its URL.
const startTimeout = 10 * time.Second

// StartHTTP starts the reference server from bin listening on 127.0.0.1 at a free port, with
// the further testserver flags extra (e.g. [DelayModel.TestserverFlags]), and waits for the URL
// it prints. Close stops it.
func StartHTTP(ctx context.Context, bin string, extra ...string) (*HTTPServer, error) {
	cmd := exec.Command(bin, append([]string{"testserver", "--transport", "http", "--addr", "127.0.0.1:0"}, extra...)...)
	cmd.SysProcAttr = childAttr()
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("bench: start http server: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench: start http server: %w", err)
	}
	s := &HTTPServer{cmd: cmd, waited: make(chan struct{})}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		// Keep reading so the child never blocks on a full stdout pipe.
		for sc.Scan() {
		}
		_ = cmd.Wait()
		close(s.waited)
	}()
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	select {
	case line, ok := <-lines:
		if !ok || !strings.HasPrefix(line, "http://127.0.0.1:") {
			s.Close()
			return nil, fmt.Errorf("bench: start http server: unexpected first line %q", line)
		}
		s.URL = line
		return s, nil
	case <-ctx.Done():
		s.Close()
		return nil, fmt.Errorf("bench: start http server: %w", ctx.Err())
	}
}

// Close stops the server: SIGTERM, then SIGKILL if it has not exited within 5s.
func (s *HTTPServer) Close() error {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.waited:
		return nil
	case <-time.After(5 * time.Second):
	}
	_ = s.cmd.Process.Kill()
	select {
	case <-s.waited:
		return nil
	case <-time.After(5 * time.Second):
		return errors.New("bench: http server did not exit after SIGKILL")
	}
}
