//go:build unix

package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The raw clients send pre-encoded requests: the bytes before the id and the bytes after it.
var (
	rawHead     = []byte(`{"jsonrpc":"2.0","id":`)
	rawEchoTail = []byte(`,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`)
	rawResult   = []byte(`"result":`)
	rawIDKey    = []byte(`"id":`)
)

func rawInitialize(id int64) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) +
		`,"method":"initialize","params":{"protocolVersion":"` + ProtocolVersion +
		`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
}

var rawInitialized = []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

// rawRequest encodes a tools/call for any tool (not the hot path).
func rawRequest(id int64, name string, args map[string]any) ([]byte, error) {
	params := map[string]any{"name": name}
	if args != nil {
		params["arguments"] = args
	}
	return json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

// bufPool holds request buffers of the raw clients.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// responseID returns the integer id of a response line (the servers write it near the start).
func responseID(line []byte) (int64, bool) {
	i := bytes.Index(line, rawIDKey)
	if i < 0 {
		return 0, false
	}
	rest := line[i+len(rawIDKey):]
	j := 0
	for j < len(rest) && (rest[j] == '-' || rest[j] >= '0' && rest[j] <= '9') {
		j++
	}
	n, err := strconv.ParseInt(string(rest[:j]), 10, 64)
	return n, err == nil
}

// rawStdio is the hand-rolled stdio client: one write per request, one reader matching
// response lines to waiting callers by id.
type rawStdio struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	onCall func()
	next   atomic.Int64
	wmu    sync.Mutex // serializes writes to stdin

	mu      sync.Mutex // guards pending and err
	pending map[int64]chan bool
	err     error // set once the reader stopped
	done    chan struct{}
}

func dialRawStdio(ctx context.Context, t Target) (Client, error) {
	path, args := t.stdioCommand()
	cmd := exec.Command(path, args...)
	cmd.SysProcAttr = childAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("bench: raw stdio: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("bench: raw stdio: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench: raw stdio: start %s: %w", cmd.Path, err)
	}
	c := &rawStdio{cmd: cmd, stdin: stdin, onCall: t.OnCall, pending: make(map[int64]chan bool), done: make(chan struct{})}
	go c.read(stdout)
	if err := c.roundTrip(ctx, c.next.Add(1), rawInitialize); err != nil {
		c.Close()
		return nil, fmt.Errorf("bench: raw stdio: initialize: %w", err)
	}
	if err := c.write(append(rawInitialized[:len(rawInitialized):len(rawInitialized)], '\n')); err != nil {
		c.Close()
		return nil, fmt.Errorf("bench: raw stdio: initialized: %w", err)
	}
	return c, nil
}

func (c *rawStdio) read(stdout io.Reader) {
	defer close(c.done)
	r := bufio.NewReaderSize(stdout, 64<<10)
	var err error
	for {
		var line []byte
		line, err = r.ReadSlice('\n')
		if err != nil {
			break
		}
		id, ok := responseID(line)
		if !ok {
			continue
		}
		c.mu.Lock()
		ch := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ch != nil {
			ch <- bytes.Contains(line, rawResult)
		}
	}
	c.mu.Lock()
	c.err = fmt.Errorf("server output ended: %w", err)
	for id, ch := range c.pending {
		delete(c.pending, id)
		ch <- false
	}
	c.mu.Unlock()
}

func (c *rawStdio) write(line []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.stdin.Write(line)
	return err
}

// roundTrip registers id, writes the request encode(id) plus a newline and waits for the answer.
func (c *rawStdio) roundTrip(ctx context.Context, id int64, encode func(int64) []byte) error {
	ch := make(chan bool, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return c.err
	}
	c.pending[id] = ch
	c.mu.Unlock()
	line := append(encode(id), '\n')
	if err := c.write(line); err != nil {
		return err
	}
	if c.onCall != nil && isToolsCall(line) {
		c.onCall()
	}
	select {
	case ok := <-ch:
		if !ok {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.err != nil {
				return c.err
			}
			return errors.New("error response")
		}
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return ctx.Err()
	}
}

func (c *rawStdio) Echo(ctx context.Context) error {
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	return c.roundTrip(ctx, c.next.Add(1), func(id int64) []byte {
		b := append((*bp)[:0], rawHead...)
		b = strconv.AppendInt(b, id, 10)
		b = append(b, rawEchoTail...)
		*bp = b
		return b
	})
}

func (c *rawStdio) CallTool(ctx context.Context, name string, args map[string]any) error {
	id := c.next.Add(1)
	req, err := rawRequest(id, name, args)
	if err != nil {
		return err
	}
	return c.roundTrip(ctx, id, func(int64) []byte { return req })
}

// Close closes stdin, waits up to a second for the child to exit, then kills it.
func (c *rawStdio) Close() error {
	_ = c.stdin.Close()
	select {
	case <-c.done:
	case <-time.After(time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
	_ = c.cmd.Process.Kill()
	_ = c.cmd.Wait()
	return nil
}

// rawHTTP is the hand-rolled Streamable HTTP client: a plain net/http POST of a pre-encoded
// body per call, the JSON answer read whole and checked for a result. Stateful (up to
// 2025-11-25) it does the initialize handshake and sends the Mcp-Session-Id it got; stateless
// (2026-07-28) it sends no handshake, the version in every request's _meta and the Mcp-Method
// and Mcp-Name headers the era requires.
type rawHTTP struct {
	client    *http.Client
	url       string
	version   string
	stateless bool
	next      atomic.Int64
	// echoTail is the echo request after its id; callHeader the headers of a tools/call.
	echoTail   []byte
	callHeader http.Header
	// sidHeader is the shared Mcp-Session-Id value (nil: none).
	sidHeader []string
}

// rawStatelessMeta is the _meta of every stateless request, after the version.
const rawStatelessMeta = `","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}`

func dialRawHTTP(ctx context.Context, t Target) (Client, error) {
	v := t.version()
	c := &rawHTTP{client: t.HTTPClient, url: t.URL, version: v, stateless: v == StatelessVersion, echoTail: rawEchoTail}
	c.callHeader = http.Header{
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {v},
	}
	if c.stateless {
		c.echoTail = []byte(`,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"` +
			v + rawStatelessMeta + `}}`)
		c.callHeader["Mcp-Method"] = []string{"tools/call"}
		c.callHeader["Mcp-Name"] = []string{"echo"}
		return c, nil
	}
	sid, err := c.post(ctx, rawInitialize(c.next.Add(1)), nil)
	if err != nil {
		return nil, fmt.Errorf("bench: raw http: initialize: %w", err)
	}
	if sid != "" {
		c.sidHeader = []string{sid}
		c.callHeader["Mcp-Session-Id"] = c.sidHeader
	}
	if _, err := c.post(ctx, rawInitialized, nil); err != nil {
		return nil, fmt.Errorf("bench: raw http: initialized: %w", err)
	}
	return c, nil
}

// post sends body and checks the answer: a result for a request (JSON, or an SSE stream whose
// data carries it), 202 for a notification. It returns the Mcp-Session-Id header. h, if set,
// is the request's headers (shared, read-only); nil sends the stateful session's.
func (c *rawHTTP) post(ctx context.Context, body []byte, h http.Header) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	if h == nil {
		h = http.Header{
			"Content-Type":         {"application/json"},
			"Accept":               {"application/json, text/event-stream"},
			"Mcp-Protocol-Version": {c.version},
		}
		if c.sidHeader != nil {
			h["Mcp-Session-Id"] = c.sidHeader
		}
	}
	req.Header = h
	resp, err := c.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	buf := bytes.NewBuffer((*bp)[:0])
	_, err = buf.ReadFrom(resp.Body)
	*bp = buf.Bytes()
	switch {
	case err != nil:
		return "", err
	case resp.StatusCode == http.StatusAccepted:
		return "", nil
	case resp.StatusCode != http.StatusOK:
		return "", fmt.Errorf("status %s: %.200s", resp.Status, buf.Bytes())
	case !bytes.Contains(buf.Bytes(), rawResult):
		return "", fmt.Errorf("no result in %.200s", buf.Bytes())
	}
	return resp.Header.Get("Mcp-Session-Id"), nil
}

func (c *rawHTTP) Echo(ctx context.Context) error {
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	b := append((*bp)[:0], rawHead...)
	b = strconv.AppendInt(b, c.next.Add(1), 10)
	b = append(b, c.echoTail...)
	*bp = b
	_, err := c.post(ctx, b, c.callHeader)
	return err
}

func (c *rawHTTP) CallTool(ctx context.Context, name string, args map[string]any) error {
	if c.stateless {
		return fmt.Errorf("bench: raw http: stateless CallTool of %q: only Echo is stateless", name)
	}
	req, err := rawRequest(c.next.Add(1), name, args)
	if err != nil {
		return err
	}
	_, err = c.post(ctx, req, nil)
	return err
}

// Close closes idle connections; the server session is left to end with the server.
func (c *rawHTTP) Close() error {
	c.client.CloseIdleConnections()
	return nil
}
