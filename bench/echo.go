package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The echo server's answers, pre-encoded around the request's id.
var (
	echoHead       = []byte(`{"jsonrpc":"2.0","id":`)
	echoCallTail   = []byte(`,"result":{"content":[{"type":"text","text":"hello"}]}}` + "\n")
	echoListTail   = []byte(`,"result":{"tools":[{"name":"echo","description":"Returns hello.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}]}}` + "\n")
	echoEmptyTail  = []byte(`,"result":{}}` + "\n")
	echoNoMethod   = []byte(`,"error":{"code":-32601,"message":"method not found"}}` + "\n")
	echoInitHead   = []byte(`,"result":{"protocolVersion":"`)
	echoInitTail   = []byte(`","capabilities":{"tools":{}},"serverInfo":{"name":"bench-echo","version":"1"}}}` + "\n")
	echoParseError = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}` + "\n")
	keyID          = []byte(`"id":`)
	keyMethod      = []byte(`"method":`)
	keyVersion     = []byte(`"protocolVersion":`)
)

// EchoVersion is the protocol version the echo server answers with when the client's
// initialize names none.
const EchoVersion = "2025-11-25"

// ServeEcho is a minimal fast MCP server over newline-delimited JSON: it reads a request line,
// finds its id and method by scanning the bytes (no JSON decoding) and writes a pre-encoded
// answer with the id patched in. tools/call always answers {"content":[{"type":"text",
// "text":"hello"}]}; tools/list lists one tool, echo; initialize accepts the client's protocol
// version; ping and anything else answers an empty result or -32601; notifications are not
// answered. Answers are buffered and flushed when no further request is waiting, so a burst
// costs one write. It is the server of the load benchmarks, cheap enough that the client is
// what they measure. It returns nil at the end of r.
func ServeEcho(r io.Reader, w io.Writer) error {
	in := bufio.NewReaderSize(r, 64<<10)
	out := bufio.NewWriterSize(w, 64<<10)
	for {
		line, err := in.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: skip it whole and answer it as unparsable.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = in.ReadSlice('\n')
			}
			out.Write(echoParseError)
			line = nil
		}
		if len(line) > 0 {
			answer(out, line)
		}
		if err != nil {
			if ferr := out.Flush(); ferr != nil {
				return fmt.Errorf("echo: write: %w", ferr)
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("echo: read: %w", err)
		}
		if in.Buffered() == 0 {
			if err := out.Flush(); err != nil {
				return fmt.Errorf("echo: write: %w", err)
			}
		}
	}
}

// answer writes the answer to one request line, if it needs one.
func answer(out *bufio.Writer, line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	if line[0] != '{' {
		out.Write(echoParseError)
		return
	}
	method := stringAfter(line, keyMethod)
	id := rawValueAfter(line, keyID)
	if id == nil {
		if method == nil {
			out.Write(echoParseError) // neither a request nor a notification
		}
		return // a notification
	}
	out.Write(echoHead)
	out.Write(id)
	switch string(method) {
	case "tools/call":
		out.Write(echoCallTail)
	case "tools/list":
		out.Write(echoListTail)
	case "initialize":
		v := stringAfter(line, keyVersion)
		if v == nil || bytes.ContainsFunc(v, func(r rune) bool { return r < 0x20 }) {
			v = []byte(EchoVersion)
		}
		out.Write(echoInitHead)
		out.Write(v)
		out.Write(echoInitTail)
	case "ping":
		out.Write(echoEmptyTail)
	default:
		out.Write(echoNoMethod)
	}
}

// stringAfter returns the contents of the JSON string that follows key, or nil when there is
// none or it holds an escape.
func stringAfter(line, key []byte) []byte {
	i := bytes.Index(line, key)
	if i < 0 {
		return nil
	}
	rest := bytes.TrimLeft(line[i+len(key):], " \t")
	if len(rest) == 0 || rest[0] != '"' {
		return nil
	}
	rest = rest[1:]
	j := bytes.IndexAny(rest, `"\`)
	if j < 0 || rest[j] != '"' {
		return nil
	}
	return rest[:j]
}

// rawValueAfter returns the raw JSON number or string after key ("id": 42 or "id":"a"), or
// nil when key is absent or its value is null, malformed or something else.
func rawValueAfter(line, key []byte) []byte {
	i := bytes.Index(line, key)
	if i < 0 {
		return nil
	}
	rest := bytes.TrimLeft(line[i+len(key):], " \t")
	if len(rest) == 0 {
		return nil
	}
	if rest[0] == '"' {
		for j := 1; j < len(rest); j++ {
			switch rest[j] {
			case '\\':
				j++
			case '"':
				if s := rest[:j+1]; json.Valid(s) {
					return s
				}
				return nil
			}
		}
		return nil
	}
	n := numberLen(rest)
	if n == 0 {
		return nil
	}
	return rest[:n]
}

// numberLen returns the length of the JSON number at the start of b, or 0.
func numberLen(b []byte) int {
	i := 0
	digits := func() int {
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i - start
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	if n := digits(); n == 0 || n > 1 && b[i-n] == '0' {
		return 0
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return 0
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0
		}
	}
	return i
}
