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
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/linestream"
)

// fakeServer is a minimal MCP server for the in-memory figure: it answers initialize (echoing
// the requested version) and every tools/call with one pre-encoded text result, patching the
// id in. It runs on its own OS thread, whose CPU clock it reads when it handles a tools/call
// named "mark", so a measurement can subtract what the server spent.
type fakeServer struct {
	cpu atomic.Int64 // thread CPU (ns) at the last "mark" call
}

var (
	fakeEcho    = []byte(`,"result":{"content":[{"type":"text","text":"hello"}]}}`)
	fakeEmpty   = []byte(`,"result":{}}`)
	fakeVersion = []byte(`"protocolVersion":"`)
)

// serve answers requests read from rw until it fails (the pipe closed).
func (f *fakeServer) serve(rw io.ReadWriter) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()
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
			if bytes.Contains(line, []byte(`"name":"mark"`)) {
				f.cpu.Store(int64(threadCPU() - start))
			}
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
// JSON over a synchronous in-memory pipe) against the fake server, whose CPU is subtracted:
// Sample.ClientCPUPerCall is the client's CPU alone. Only Ours and GoSDK are supported.
func InMemory(ctx context.Context, kind Kind, l Load) (Sample, error) {
	cc, sc := net.Pipe()
	f := &fakeServer{}
	served := make(chan struct{})
	go func() { defer close(served); f.serve(sc) }()
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
		c, err = openOurs(ctx, connDialer{linestream.NewConn(cc, cc, cc.Close, nil)}, nil)
	case GoSDK:
		c, err = connectGoSDK(ctx, &mcp.IOTransport{Reader: cc, Writer: cc})
	default:
		return Sample{}, fmt.Errorf("bench: no in-memory %s client", kind)
	}
	if err != nil {
		return Sample{}, err
	}
	defer c.Close()
	mark := func(ctx context.Context) (time.Duration, error) {
		if err := c.CallTool(ctx, "mark", nil); err != nil {
			return 0, fmt.Errorf("bench: read the fake server's CPU: %w", err)
		}
		return time.Duration(f.cpu.Load()), nil
	}
	return run(ctx, c, l, mark)
}
