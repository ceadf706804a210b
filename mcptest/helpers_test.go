package mcptest_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/poll"
	"github.com/mcpspec/mcpspec/mcptest"
)

// waitFor bounds every wait for a frame that should arrive.
const waitFor = 5 * time.Second

// msg is a decoded frame from the server.
type msg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
	raw []byte
}

// lineClient speaks raw newline-delimited JSON-RPC to a server.
type lineClient struct {
	t      testing.TB
	w      io.Writer
	closer io.Closer
	lines  chan []byte // closed at EOF
	wg     sync.WaitGroup
	nextID int
}

func newLineClient(t testing.TB, r io.Reader, w io.Writer, closer io.Closer) *lineClient {
	c := &lineClient{t: t, w: w, closer: closer, lines: make(chan []byte, 256)}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer close(c.lines)
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				c.lines <- []byte(strings.TrimRight(string(line), "\n"))
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(c.close)
	return c
}

// dialTCP connects a lineClient to a TCPServer.
func dialTCP(t testing.TB, s *mcptest.TCPServer) *lineClient {
	t.Helper()
	nc, err := net.DialTimeout("tcp", s.Addr, waitFor)
	if err != nil {
		t.Fatalf("dial %s: %v", s.Addr, err)
	}
	return newLineClient(t, nc, nc, nc)
}

func (c *lineClient) close() {
	_ = c.closer.Close()
	c.wg.Wait()
}

// sendRaw writes one line.
func (c *lineClient) sendRaw(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.w, line+"\n"); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// request sends a request with a fresh integer id and returns the id.
func (c *lineClient) request(method string, params any) int {
	c.t.Helper()
	c.nextID++
	c.send(c.nextID, method, params)
	return c.nextID
}

// send writes a request with the given id (nil: a notification).
func (c *lineClient) send(id any, method string, params any) {
	c.t.Helper()
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if id != nil {
		m["id"] = id
	}
	if params != nil {
		m["params"] = params
	}
	b, err := json.Marshal(m)
	if err != nil {
		c.t.Fatal(err)
	}
	c.sendRaw(string(b))
}

// recvRaw returns the next line, failing the test after waitFor.
func (c *lineClient) recvRaw() []byte {
	c.t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			c.t.Fatal("connection closed while waiting for a frame")
		}
		return line
	case <-time.After(waitFor):
		c.t.Fatal("no frame within", waitFor)
	}
	return nil
}

func (c *lineClient) recv() msg {
	c.t.Helper()
	line := c.recvRaw()
	var m msg
	if err := json.Unmarshal(line, &m); err != nil {
		c.t.Fatalf("frame is not JSON: %v: %s", err, line)
	}
	m.raw = line
	return m
}

// recvResponse skips notifications until a response arrives.
func (c *lineClient) recvResponse() msg {
	c.t.Helper()
	for {
		m := c.recv()
		if m.Method == "" {
			return m
		}
	}
}

// call sends a request and returns its response, failing on a mismatched id.
func (c *lineClient) call(method string, params any) msg {
	c.t.Helper()
	id := c.request(method, params)
	m := c.recvResponse()
	if string(m.ID) != fmt.Sprint(id) {
		c.t.Fatalf("%s: response id %s, want %d", method, m.ID, id)
	}
	return m
}

// result calls and decodes a successful result into v.
func (c *lineClient) result(method string, params any, v any) {
	c.t.Helper()
	m := c.call(method, params)
	if m.Error != nil {
		c.t.Fatalf("%s: error %d %s", method, m.Error.Code, m.Error.Message)
	}
	if err := json.Unmarshal(m.Result, v); err != nil {
		c.t.Fatalf("%s: decode result: %v: %s", method, err, m.Result)
	}
}

// initialize performs the legacy handshake.
func (c *lineClient) initialize() {
	c.t.Helper()
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	c.result("initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "test", "version": "0"},
	}, &res)
	if res.ProtocolVersion != "2025-11-25" {
		c.t.Fatalf("negotiated %q", res.ProtocolVersion)
	}
	c.send(nil, "notifications/initialized", nil)
}

// expectClosed waits for EOF, failing if a frame arrives first.
func (c *lineClient) expectClosed() {
	c.t.Helper()
	select {
	case line, ok := <-c.lines:
		if ok {
			c.t.Fatalf("got frame %s, want the connection closed", line)
		}
	case <-time.After(waitFor):
		c.t.Fatal("connection still open after", waitFor)
	}
}

// expectSilence asserts no frame arrives for d: the only way to observe "never answered".
func (c *lineClient) expectSilence(d time.Duration) {
	c.t.Helper()
	select {
	case line, ok := <-c.lines:
		if ok {
			c.t.Fatalf("got frame %s, want silence", line)
		}
		c.t.Fatal("connection closed, want silence")
	case <-time.After(d):
	}
}

// toolResult is a decoded tools/call result.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
	ResultType        string          `json:"resultType"`
	InputRequests     json.RawMessage `json:"inputRequests"`
	RequestState      string          `json:"requestState"`
}

func (r toolResult) text() string {
	if len(r.Content) == 0 {
		return ""
	}
	return r.Content[0].Text
}

func toolCall(name string, args map[string]any) map[string]any {
	return map[string]any{"name": name, "arguments": args}
}

// statelessMeta returns params with the stateless-era _meta added.
func statelessMeta(params map[string]any, version string) map[string]any {
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{
		mcptest.MetaProtocolVersion:                  version,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	return params
}

// waitStats polls the server's counters until cond holds, bounded by waitFor.
func waitStats(t testing.TB, stats func() mcptest.Stats, cond func(mcptest.Stats) bool) mcptest.Stats {
	t.Helper()
	var s mcptest.Stats
	if !poll.Within(waitFor, func() bool { s = stats(); return cond(s) }) {
		t.Fatalf("stats condition not met: %+v", s)
	}
	return s
}

// pipe is an in-memory, closable one-way stream.
func pipe() (*io.PipeReader, *io.PipeWriter) { return io.Pipe() }
