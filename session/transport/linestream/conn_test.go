package linestream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/mcpspec/mcpspec/session/transport"
)

// pipeConn returns a Conn whose frames loop back: what it sends, it receives.
func pipeConn(t *testing.T) *Conn {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	return NewConn(pr, pw, func() error { return errors.Join(pw.Close(), pr.Close()) }, nil)
}

func TestConnRoundTripAndClose(t *testing.T) {
	defer checkGoroutines(t)()
	c := pipeConn(t)
	ctx := context.Background()
	const n = 100
	for i := range n {
		if err := c.Send(ctx, fmt.Appendf(nil, `{"id":%d}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		f, err := c.Recv()
		if err != nil || f.Err != nil {
			t.Fatalf("frame %d: %v %v", i, err, f.Err)
		}
		if want := fmt.Sprintf(`{"id":%d}`, i); string(f.Data) != want {
			t.Fatalf("frame %d = %s, want %s", i, f.Data, want)
		}
	}
	recvErr := make(chan error, 1)
	go func() {
		_, err := c.Recv()
		recvErr <- err
	}()
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-recvErr; err != transport.ErrClosed {
		t.Fatalf("pending Recv after Close: %v, want ErrClosed", err)
	}
	if err := c.Send(ctx, []byte("{}")); err != transport.ErrClosed {
		t.Fatalf("Send after Close: %v, want ErrClosed", err)
	}
	if _, err := c.Recv(); err != transport.ErrClosed {
		t.Fatalf("Recv after Close: %v, want ErrClosed", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestConnPeerEOF(t *testing.T) {
	c := NewConn(strings.NewReader("{}\n"), io.Discard, nil, &Options{MaxFrameSize: 8})
	defer c.Close()
	if f, err := c.Recv(); err != nil || string(f.Data) != "{}" {
		t.Fatalf("Recv = %q, %v", f.Data, err)
	}
	if _, err := c.Recv(); err != io.EOF {
		t.Fatalf("Recv at end = %v, want io.EOF", err)
	}
}

func ExampleReader() {
	r := NewReader(strings.NewReader("{\"id\":1}\r\n\n{\"id\":2\n{\"id\":"), 0)
	for {
		f, err := r.ReadFrame()
		if err != nil {
			fmt.Println("end:", err)
			return
		}
		if f.Err != nil {
			fmt.Printf("fault: %v: %s\n", f.Err, f.Data)
			continue
		}
		fmt.Printf("frame: %s\n", f.Data)
	}
	// Output:
	// frame: {"id":1}
	// frame: {"id":2
	// fault: transport: malformed frame (truncated, 6 bytes): {"id":
	// end: EOF
}

// TestConnCloseFlushes: frames sent just before Close reach the peer.
func TestConnCloseFlushes(t *testing.T) {
	defer checkGoroutines(t)()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	c := NewConn(strings.NewReader(""), pw, pw.Close, nil)
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(pr)
		got <- b
	}()
	const n = 1000
	for i := range n {
		if err := c.Send(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled"}`)); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(<-got), "\n"); lines != n {
		t.Fatalf("peer got %d frames, want %d", lines, n)
	}
}
