// Package conntest holds the bounded Dial and Recv that the transports' tests share: every
// wait has a deadline, so a transport that hangs fails its test instead of the test binary.
package conntest

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/session/transport"
)

// Wait bounds Dial and Recv.
const Wait = 5 * time.Second

// Dial dials d within Wait, fails the test on error and closes the connection at cleanup.
func Dial(t testing.TB, d transport.Dialer) transport.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Wait)
	defer cancel()
	c, err := d.Dial(ctx)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Recv returns c's next frame and Recv's error. If nothing comes within Wait it closes c (which
// unblocks the pending Recv) and fails the test.
func Recv(t testing.TB, c transport.Conn) (transport.Frame, error) {
	t.Helper()
	type res struct {
		f   transport.Frame
		err error
	}
	ch := make(chan res, 1)
	go func() {
		f, err := c.Recv()
		ch <- res{f, err}
	}()
	select {
	case r := <-ch:
		return r.f, r.err
	case <-time.After(Wait):
		c.Close()
		t.Fatalf("Recv: nothing within %v", Wait)
	}
	return transport.Frame{}, nil
}

// CheckGoroutines returns a func, meant for defer, that fails t if goroutines started since the
// call are still running after a grace of 3s: a transport must not leak its readers or writers.
func CheckGoroutines(t testing.TB) func() {
	t.Helper()
	before := runtime.NumGoroutine()
	return func() {
		t.Helper()
		deadline := time.Now().Add(3 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<16)
				t.Errorf("goroutines: %d before, %d after:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}
