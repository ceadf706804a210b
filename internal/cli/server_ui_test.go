package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestUIVerb runs `mcpspec ui` in process: it prints a URL carrying the token, the API answers
// with that token and refuses without it, and an interrupt ends it with exit code 130.
func TestUIVerb(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, w := io.Pipe()
	done := make(chan ExitCode, 1)
	go func() {
		done <- Run(ctx, []string{"mcpspec", "ui", "--addr", "127.0.0.1:0", "--no-open"}, &IO{Stdin: strings.NewReader(""), Stdout: w, Stderr: io.Discard, TempDir: t.TempDir()})
		w.Close()
	}()
	lines := bufio.NewScanner(r)
	if !lines.Scan() {
		t.Fatalf("no output: %v", lines.Err())
	}
	go io.Copy(io.Discard, r)
	url, ok := strings.CutPrefix(lines.Text(), "mcpspec ui: ")
	base, tok, found := strings.Cut(url, "/#token=")
	if !ok || !found || len(tok) != 64 || !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("first line %q, want mcpspec ui: http://127.0.0.1:PORT/#token=<64 hex digits>", lines.Text())
	}
	get := func(auth string) int {
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/info", nil)
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if got := get(tok); got != 200 {
		t.Errorf("with the printed token: %d", got)
	}
	if got := get(""); got != 401 {
		t.Errorf("without a token: %d", got)
	}
	cancel()
	select {
	case code := <-done:
		if code != ExitInterrupted {
			t.Errorf("exit code %d after the interrupt, want %d", code, ExitInterrupted)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("mcpspec ui did not end within 10s of the interrupt")
	}
}
