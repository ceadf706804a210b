package session

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/pipe"
)

// CPU is measured with getrusage (the whole process) and, for the in-process fake server, with
// the thread CPU clock of its goroutine locked to one OS thread; the difference is the
// client's CPU per call.

func processCPU() time.Duration {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func threadCPU() time.Duration {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}

var benchArgs = map[string]any{"text": "hello"}

// echoServer is a minimal legacy MCP server for benchmarks: it patches the request id into a
// pre-encoded tools/call result. Its goroutine is locked to an OS thread so its CPU can be
// measured apart ("bench/cpu" answers with it). With hold set it keeps tools/call requests
// until hold of them are pending, then answers them all.
func echoServer(ctx context.Context, end *pipe.ServerEnd, hold int, held chan<- struct{}, release <-chan struct{}) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()
	var parked [][]byte
	reply := func(id []byte, result string) {
		b := make([]byte, 0, 48+len(result))
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = append(b, id...)
		b = append(b, `,"result":`...)
		b = append(b, result...)
		b = append(b, '}')
		_ = end.Send(ctx, b)
	}
	for {
		f, err := end.Recv(ctx)
		if err != nil {
			return
		}
		id := benchID(f)
		switch {
		case id == nil: // a notification
		case bytes.Contains(f, []byte(`"tools/call"`)):
			if hold == 0 {
				reply(id, `{"content":[{"type":"text","text":"hello"}]}`)
				continue
			}
			parked = append(parked, id)
			if len(parked) == hold {
				held <- struct{}{}
				select {
				case <-release:
				case <-ctx.Done():
					return
				}
				for _, id := range parked {
					reply(id, `{"content":[{"type":"text","text":"hello"}]}`)
				}
				parked = parked[:0]
			}
		case bytes.Contains(f, []byte(`"initialize"`)):
			reply(id, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bench","version":"1"}}`)
		case bytes.Contains(f, []byte(`"bench/cpu"`)):
			reply(id, strconv.FormatInt(int64(threadCPU()-start), 10))
		default:
			_ = end.Send(ctx, []byte(`{"jsonrpc":"2.0","id":`+string(id)+`,"error":{"code":-32601,"message":"no"}}`))
		}
	}
}

// benchID finds the integer id in a request the session encoded (`"id":N,`).
func benchID(f []byte) []byte {
	i := bytes.Index(f, []byte(`"id":`))
	if i < 0 {
		return nil
	}
	f = f[i+5:]
	j := bytes.IndexByte(f, ',')
	if j < 0 {
		return nil
	}
	return f[:j]
}

func serverCPU(b *testing.B, s *Session) time.Duration {
	resp, err := s.Request(context.Background(), "bench/cpu", nil)
	if err != nil {
		b.Fatal(err)
	}
	n, _ := strconv.ParseInt(string(resp.Result), 10, 64)
	return time.Duration(n)
}

// BenchmarkCallTool measures the session's client CPU per tools/call over the in-memory pipe
// against a minimal echo server, with many callers in flight.
func BenchmarkCallTool(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	conn, end := pipe.New()
	done := make(chan struct{})
	go func() { defer close(done); echoServer(ctx, end, 0, nil, nil) }()
	defer func() { cancel(); <-done }()
	s, err := Open(ctx, connDialer{conn}, &Options{ProtocolVersion: Version20251125})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	b.SetParallelism(16)
	srv0, cpu0 := serverCPU(b, s), processCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.CallTool(ctx, "echo", benchArgs, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	cpu, srv := processCPU()-cpu0, serverCPU(b, s)-srv0
	b.ReportMetric(float64(cpu-srv)/float64(b.N)/1e3, "client-µs/op")
	b.ReportMetric(float64(cpu)/float64(b.N)/1e3, "total-cpu-µs/op")
}

// goSDKServer starts a go-sdk server with one echo tool on t.
func goSDKServer(b *testing.B, ctx context.Context, t mcp.Transport) *mcp.ServerSession {
	server := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "echo", Description: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, x in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: x.Text}}}, nil, nil
	})
	ss, err := server.Connect(ctx, t, nil)
	if err != nil {
		b.Fatal(err)
	}
	return ss
}

// BenchmarkGoSDKCallTool is the official go-sdk client against a go-sdk server over its
// in-memory transport: the process CPU per call, client and server together.
func BenchmarkGoSDKCallTool(b *testing.B) {
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss := goSDKServer(b, ctx, st)
	defer ss.Close()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench-client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	b.ReportAllocs()
	b.SetParallelism(16)
	cpu0 := processCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: benchArgs}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N)/1e3, "total-cpu-µs/op")
}

// lineConn frames a net.Conn with newlines, just enough to run the session against a go-sdk
// server in a benchmark (the real stdio/tcp transports live in their own packages).
type lineConn struct {
	c   net.Conn
	r   *bufio.Reader
	wmu sync.Mutex // guards w
	w   *bufio.Writer
}

func (l *lineConn) Send(_ context.Context, frame []byte) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.w.Write(frame)
	l.w.WriteByte('\n')
	return l.w.Flush()
}

func (l *lineConn) Recv() (transport.Frame, error) {
	line, err := l.r.ReadSlice('\n')
	if err != nil {
		return transport.Frame{}, err
	}
	return transport.Frame{Data: append([]byte(nil), line[:len(line)-1]...), At: time.Now()}, nil
}

func (l *lineConn) Close() error { return l.c.Close() }

// BenchmarkCallToolGoSDKServer is this session against the same go-sdk server as
// BenchmarkGoSDKCallTool (over net.Pipe with newline framing): subtracting the two totals
// compares the clients with the server's cost held equal.
func BenchmarkCallToolGoSDKServer(b *testing.B) {
	ctx := context.Background()
	c1, c2 := net.Pipe()
	ss := goSDKServer(b, ctx, &mcp.IOTransport{Reader: c1, Writer: c1})
	defer ss.Close()
	conn := &lineConn{c: c2, r: bufio.NewReaderSize(c2, 64<<10), w: bufio.NewWriter(c2)}
	s, err := Open(ctx, connDialer{conn}, &Options{ProtocolVersion: Version20251125})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	b.SetParallelism(16)
	cpu0 := processCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.CallTool(ctx, "echo", benchArgs, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N)/1e3, "total-cpu-µs/op")
}

// BenchmarkInflightMemory measures the memory one in-flight call costs: 1,000 concurrent
// tools/call are held unanswered by the server while live heap and stacks are sampled.
func BenchmarkInflightMemory(b *testing.B) {
	const inflight = 1000
	ctx, cancel := context.WithCancel(context.Background())
	conn, end := pipe.New()
	held, release := make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); echoServer(ctx, end, inflight, held, release) }()
	defer func() { cancel(); <-done }()
	s, err := Open(ctx, connDialer{conn}, &Options{ProtocolVersion: Version20251125})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	live := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc + m.StackInuse
	}
	var total float64
	b.ResetTimer()
	for range b.N {
		before := live()
		var wg sync.WaitGroup
		for range inflight {
			wg.Go(func() {
				if _, err := s.CallTool(ctx, "echo", benchArgs, nil); err != nil {
					b.Error(err)
				}
			})
		}
		<-held
		during := live()
		release <- struct{}{}
		wg.Wait()
		total += float64(during-before) / inflight
	}
	b.ReportMetric(total/float64(b.N), "bytes/inflight-call")
}
