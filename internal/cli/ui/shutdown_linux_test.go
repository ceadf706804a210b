package ui

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestShutdownStopsServers connects to testserver through the API, ends the UI, and checks that
// the server's process is gone: nothing the UI starts outlives it.
func TestShutdownStopsServers(t *testing.T) {
	mcpspec, err := exec.LookPath("mcpspec") // this test binary, installed by TestMain
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Addr: "127.0.0.1:0", Dir: t.TempDir(), Executable: mcpspec, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	base := "http://" + ln.Addr().String()
	h := map[string]string{"Authorization": "Bearer " + s.Token(), "Content-Type": "application/json"}
	res := do(t, base, req{method: "POST", path: "/api/sessions", body: `{"server":"testserver"}`, header: h})
	var sess struct {
		ID  string `json:"id"`
		PID int    `json:"pid"`
	}
	err = json.NewDecoder(res.Body).Decode(&sess)
	res.Body.Close()
	if err != nil || res.StatusCode != 200 || sess.PID == 0 {
		t.Fatalf("connect: status %d, %+v, %v", res.StatusCode, sess, err)
	}
	if err := syscall.Kill(sess.PID, 0); err != nil {
		t.Fatalf("the server (pid %d) is not running: %v", sess.PID, err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Serve did not return within 15s")
	}
	// The stdio transport has stopped and reaped the server by the time Serve returns.
	if err := syscall.Kill(sess.PID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the server (pid %d) outlived the UI: kill(pid, 0) = %v", sess.PID, err)
	}
}
