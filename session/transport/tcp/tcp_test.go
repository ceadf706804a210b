package tcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/internal/conntest"
	"github.com/mcpspec/mcpspec/session/transport/linestream"
)

// server is a line server on 127.0.0.1 that runs handle for each connection.
type server struct {
	ln net.Listener
	wg sync.WaitGroup
}

func newServer(t *testing.T, handle func(net.Conn)) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{ln: ln}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Go(func() {
				defer c.Close()
				handle(c)
			})
		}
	})
	t.Cleanup(s.close)
	return s
}

func (s *server) close() {
	s.ln.Close()
	s.wg.Wait()
}

// echo answers each line with the same line, using linestream's Reader and Writer as a server
// would.
func echo(c net.Conn) {
	r := linestream.NewReader(c, 0)
	w := linestream.NewWriter(c)
	defer w.Close()
	for {
		f, err := r.ReadFrame()
		if err != nil {
			return
		}
		if w.WriteFrame(context.Background(), f.Data) != nil {
			return
		}
	}
}

func dial(t *testing.T, addr string) *Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dialer{Addr: addr}.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestRoundTrip(t *testing.T) {
	defer checkGoroutines(t)()
	s := newServer(t, echo)
	c := dial(t, s.ln.Addr().String())
	const n = 500
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := c.Send(context.Background(), fmt.Appendf(nil, `{"id":%d}`, i)); err != nil {
				t.Errorf("send: %v", err)
			}
		})
	}
	seen := map[string]bool{}
	for range n {
		f, err := c.Recv()
		if err != nil || f.Err != nil {
			t.Fatalf("Recv: %v %v", err, f.Err)
		}
		seen[string(f.Data)] = true
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("%d distinct frames, want %d", len(seen), n)
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
		t.Fatalf("pending Recv after Close = %v, want ErrClosed", err)
	}
	if err := c.Send(context.Background(), []byte("{}")); err != transport.ErrClosed {
		t.Fatalf("Send after Close = %v, want ErrClosed", err)
	}
	s.close()
}

func TestPeerClose(t *testing.T) {
	tests := []struct {
		name   string
		send   string
		faults int
	}{
		{"clean close", "{\"id\":1}\n", 0},
		{"close mid-line", "{\"id\":1}\n{\"id\":", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, func(c net.Conn) {
				bufio.NewReader(c).ReadString('\n') // wait for the client's first frame
				io.WriteString(c, tt.send)
			})
			c := dial(t, s.ln.Addr().String())
			if err := c.Send(context.Background(), []byte("{}")); err != nil {
				t.Fatal(err)
			}
			faults := 0
			var err error
			for range 10 {
				var f transport.Frame
				if f, err = c.Recv(); err != nil {
					break
				}
				if f.Err != nil {
					faults++
				}
			}
			if !errors.Is(err, io.EOF) {
				t.Fatalf("Recv after peer close = %v, want io.EOF", err)
			}
			var ee *transport.ExitError
			if errors.As(err, &ee) {
				t.Fatal("a socket close reported as a process exit")
			}
			if faults != tt.faults {
				t.Errorf("%d framing faults, want %d", faults, tt.faults)
			}
		})
	}
}

func TestDialErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	if _, err := (Dialer{Addr: addr}).Dial(context.Background()); err == nil {
		t.Fatal("dial to a closed port succeeded")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (Dialer{Addr: addr}).Dial(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("dial with a cancelled context = %v", err)
	}
	if _, err := (Dialer{}).Dial(context.Background()); err == nil {
		t.Fatal("dial without an address succeeded")
	}
}

func checkGoroutines(t *testing.T) func() {
	t.Helper()
	return conntest.CheckGoroutines(t)
}
