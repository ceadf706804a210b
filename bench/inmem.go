//go:build unix

package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/linestream"
)

// fakeServer is a minimal MCP server for the in-memory figure: it answers initialize (echoing
// the requested version) and every tools/call with one pre-encoded text result, patching the
// id in. Its own CPU per request is measured apart by serverCost.
//
// (Locking the server to an OS thread to read its thread CPU clock, as session/bench_test.go
// does, distorts low-concurrency runs: every request then hands the P to that thread and back
// through futex calls, which cost the process several times what the client itself does.)
type fakeServer struct{}

var (
	fakeEcho    = []byte(`,"result":{"content":[{"type":"text","text":"hello"}]}}`)
	fakeEmpty   = []byte(`,"result":{}}`)
	fakeVersion = []byte(`"protocolVersion":"`)
)

// serve answers requests read from rw until it fails (the pipe closed).
func (f *fakeServer) serve(rw io.ReadWriter) {
	r := bufio.NewReaderSize(rw, 64<<10)
	w := bufio.NewWriterSize(rw, 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return
		}
		id := requestID(line)
		if id == nil {
			continue // a notification
		}
		w.WriteString(`{"jsonrpc":"2.0","id":`)
		w.Write(id)
		switch {
		case isToolsCall(line):
			w.Write(fakeEcho)
		case bytes.Contains(line, []byte(`"method":"initialize"`)):
			version := []byte(ProtocolVersion)
			if i := bytes.Index(line, fakeVersion); i >= 0 {
				rest := line[i+len(fakeVersion):]
				if j := bytes.IndexByte(rest, '"'); j >= 0 {
					version = rest[:j]
				}
			}
			w.WriteString(`,"result":{"protocolVersion":"`)
			w.Write(version)
			w.WriteString(`","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}`)
		default:
			w.Write(fakeEmpty)
		}
		w.WriteByte('\n')
		if r.Buffered() == 0 {
			if w.Flush() != nil {
				return
			}
		}
	}
}

// requestID returns the id token of a request (a number or a string), or nil for a
// notification. Both clients write the id before params.
func requestID(line []byte) []byte {
	i := bytes.Index(line, rawIDKey)
	if i < 0 {
		return nil
	}
	rest := line[i+len(rawIDKey):]
	if len(rest) > 0 && rest[0] == '"' {
		if j := bytes.IndexByte(rest[1:], '"'); j >= 0 {
			return rest[:j+2]
		}
		return nil
	}
	j := 0
	for j < len(rest) && (rest[j] == '-' || rest[j] >= '0' && rest[j] <= '9') {
		j++
	}
	if j == 0 {
		return nil
	}
	return rest[:j]
}

// connDialer hands out one ready connection.
type connDialer struct{ c transport.Conn }

func (d connDialer) Dial(context.Context) (transport.Conn, error) { return d.c, nil }

// InMemory measures a client over net.Pipe (the go-sdk's own in-memory transport: newline
// JSON over a synchronous in-memory pipe) against the fake server in this process. The
// server's share, its per-request CPU measured in isolation (serverCost) times the calls, is
// Sample.ServerCPU, so Sample.ClientCPUPerCall is the client's alone (and the scheduling of
// the goroutines on both ends). Only Ours and GoSDK are supported.
func InMemory(ctx context.Context, kind Kind, l Load) (Sample, error) {
	var s Sample
	err := withInMemory(ctx, kind, func(c Client) error {
		if err := warmUp(ctx, c, min(l.N/10, 200)); err != nil {
			return err
		}
		var err error
		s, err = run(ctx, c, l)
		return err
	})
	s.ServerCPU = serverCost(serverCostRequests) * time.Duration(s.Calls)
	return s, err
}

// withInMemory connects a client of kind to a fake server over net.Pipe and runs use with it.
func withInMemory(ctx context.Context, kind Kind, use func(c Client) error) error {
	cc, sc := net.Pipe()
	served := make(chan struct{})
	go func() { defer close(served); (&fakeServer{}).serve(sc) }()
	defer func() {
		cc.Close()
		sc.Close()
		<-served
	}()
	var (
		c   Client
		err error
	)
	switch kind {
	case Ours:
		c, err = openOurs(ctx, connDialer{linestream.NewConn(cc, cc, cc.Close, nil)}, ProtocolVersion, nil)
	case GoSDK:
		c, err = connectGoSDK(ctx, &mcp.IOTransport{Reader: cc, Writer: cc})
	default:
		return fmt.Errorf("bench: no in-memory %s client", kind)
	}
	if err != nil {
		return err
	}
	defer c.Close()
	return use(c)
}

// serverCostRequests is how many requests serverCost replays.
const serverCostRequests = 20000

// serverCost is the fake server's CPU per tools/call on its own: n requests replayed one per
// Read (as net.Pipe delivers them), each answer flushed, on one goroutine locked to its thread
// (harmless here: nothing blocks) whose CPU clock is read.
func serverCost(n int) time.Duration {
	var in []byte
	for id := range n {
		in = append(in, rawHead...)
		in = strconv.AppendInt(in, int64(id+1), 10)
		in = append(in, rawEchoTail...)
		in = append(in, '\n')
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()
	(&fakeServer{}).serve(struct {
		io.Reader
		io.Writer
	}{&lineFeeder{in}, io.Discard})
	return (threadCPU() - start) / time.Duration(n)
}

// lineFeeder returns one line per Read.
type lineFeeder struct{ data []byte }

func (l *lineFeeder) Read(p []byte) (int, error) {
	if len(l.data) == 0 {
		return 0, io.EOF
	}
	end := bytes.IndexByte(l.data, '\n') + 1
	if end == 0 {
		end = len(l.data)
	}
	n := copy(p, l.data[:end])
	l.data = l.data[n:]
	return n, nil
}
