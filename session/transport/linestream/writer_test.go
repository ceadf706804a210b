package linestream

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/poll"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/internal/conntest"
)

// gateWriter blocks its first Write until release is closed, and counts writes.
type gateWriter struct {
	mu      sync.Mutex // guards buf
	buf     bytes.Buffer
	writes  atomic.Int64
	entered chan struct{}
	release chan struct{}
}

func (g *gateWriter) Write(p []byte) (int, error) {
	if g.writes.Add(1) == 1 {
		close(g.entered)
		<-g.release
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.Write(p)
}

// TestWriterBatches holds the first write, queues 999 frames behind it, and checks they go
// out in one more write call, each frame whole and on its own line.
func TestWriterBatches(t *testing.T) {
	defer checkGoroutines(t)()
	g := &gateWriter{entered: make(chan struct{}), release: make(chan struct{})}
	w := NewWriter(g)
	defer w.Close()
	ctx := context.Background()
	const n = 1000
	errs := make(chan error, n)
	go func() { errs <- w.WriteFrame(ctx, []byte(`{"id":0}`)) }()
	<-g.entered
	for i := 1; i < n; i++ {
		go func() { errs <- w.WriteFrame(ctx, fmt.Appendf(nil, `{"id":%d}`, i)) }()
	}
	poll.Until(t, 5*time.Second, "999 frames queued", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return bytes.Count(w.queued, []byte("\n")) == n-1
	})
	close(g.release)
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := g.writes.Load(); got != 2 {
		t.Errorf("%d frames took %d writes, want 2", n, got)
	}
	seen := map[string]bool{}
	for _, line := range bytes.Split(bytes.TrimSuffix(g.buf.Bytes(), []byte("\n")), []byte("\n")) {
		seen[string(line)] = true
	}
	for i := range n {
		if !seen[fmt.Sprintf(`{"id":%d}`, i)] {
			t.Fatalf("frame %d missing or mangled", i)
		}
	}
}

// TestWriterHonoursContext sends into a pipe nobody reads: once the queue is full, WriteFrame
// and Flush must return when their context ends, and closing the pipe must let Close return.
func TestWriterHonoursContext(t *testing.T) {
	defer checkGoroutines(t)()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	w := NewWriter(pw)
	big := bytes.Repeat([]byte("x"), 4<<20) // more than a pipe buffer and than the queue
	defer pw.Close()
	timedOut := func(call func(ctx context.Context) error) bool {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := call(ctx)
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("call took %v past a 50ms deadline", d)
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want nil or deadline exceeded", err)
		}
		return err != nil
	}
	send := func(ctx context.Context) error { return w.WriteFrame(ctx, big) }
	// Once one frame is being written (blocked) and one fills the queue, every send must wait
	// for room and time out; that state is reached within three sends.
	streak := 0
	for i := 0; i < 6 && streak < 2; i++ {
		if timedOut(send) {
			streak++
		} else {
			streak = 0
		}
	}
	if streak < 2 {
		t.Fatal("4 MiB frames kept being queued behind a blocked write without waiting")
	}
	if !timedOut(w.Flush) {
		t.Fatal("Flush returned before its deadline while the peer reads nothing")
	}
	pw.Close() // unblocks the write in progress
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := w.WriteFrame(context.Background(), []byte("{}")); err != transport.ErrClosed {
		t.Fatalf("send after Close: %v, want ErrClosed", err)
	}
}

func TestWriterErrorIsSticky(t *testing.T) {
	defer checkGoroutines(t)()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	pr.Close()
	w := NewWriter(pw)
	defer pw.Close()
	defer w.Close()
	ctx := context.Background()
	if err := w.WriteFrame(ctx, []byte("{}")); err != nil {
		t.Fatalf("queueing failed early: %v", err)
	}
	err1 := w.Flush(ctx)
	if err1 == nil {
		t.Fatal("write to a pipe with no reader succeeded")
	}
	if err2 := w.WriteFrame(ctx, []byte("{}")); err2 != err1 {
		t.Fatalf("next error %v, want the first %v", err2, err1)
	}
}

func checkGoroutines(t *testing.T) func() {
	t.Helper()
	return conntest.CheckGoroutines(t)
}

// countingWriter counts write calls.
type countingWriter struct {
	w      io.Writer
	writes atomic.Int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.w.Write(p)
}

// drainedPipe returns the write end of a pipe whose read end is drained into io.Discard.
func drainedPipe(b *testing.B) (*os.File, func()) {
	pr, pw, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(io.Discard, pr)
	}()
	return pw, func() {
		pw.Close()
		<-done
		pr.Close()
	}
}

var benchFrame = []byte(`{"jsonrpc":"2.0","id":12345,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"}}}`)

// BenchmarkSend measures frames per second from 1,000 concurrent senders into an OS pipe.
func BenchmarkSend(b *testing.B) {
	pw, stop := drainedPipe(b)
	defer stop()
	cw := &countingWriter{w: pw}
	w := NewWriter(cw)
	defer w.Close()
	ctx := context.Background()
	b.SetParallelism(1000 / runtime.GOMAXPROCS(0))
	b.SetBytes(int64(len(benchFrame) + 1))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := w.WriteFrame(ctx, benchFrame); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(cw.writes.Load())/float64(b.N), "writes/op")
}

// BenchmarkSendSequential measures one sender, the latency-bound case.
func BenchmarkSendSequential(b *testing.B) {
	pw, stop := drainedPipe(b)
	defer stop()
	w := NewWriter(pw)
	defer w.Close()
	ctx := context.Background()
	b.SetBytes(int64(len(benchFrame) + 1))
	for b.Loop() {
		if err := w.WriteFrame(ctx, benchFrame); err != nil {
			b.Fatal(err)
		}
	}
}

// mutexWriter is the alternative design, kept as a baseline: a mutex around a bufio.Writer,
// flushed by the last of the waiting writers. It cannot honour a context while blocked.
type mutexWriter struct {
	pending atomic.Int64
	mu      sync.Mutex // guards bw
	bw      *bufio.Writer
}

func (m *mutexWriter) WriteFrame(frame []byte) error {
	m.pending.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.bw.Write(frame)
	m.bw.WriteByte('\n')
	if m.pending.Add(-1) == 0 {
		return m.bw.Flush()
	}
	return nil
}

func BenchmarkSendMutexBaseline(b *testing.B) {
	pw, stop := drainedPipe(b)
	defer stop()
	cw := &countingWriter{w: pw}
	m := &mutexWriter{bw: bufio.NewWriterSize(cw, 64<<10)}
	b.SetParallelism(1000 / runtime.GOMAXPROCS(0))
	b.SetBytes(int64(len(benchFrame) + 1))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := m.WriteFrame(benchFrame); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(cw.writes.Load())/float64(b.N), "writes/op")
}
