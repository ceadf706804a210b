package spec

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/sse"
	"github.com/mcpspec/mcpspec/session/transport/stdio"
	"github.com/mcpspec/mcpspec/session/transport/streamable"
	"github.com/mcpspec/mcpspec/session/transport/tcp"
	"github.com/mcpspec/mcpspec/session/transport/ws"
)

func TestResolve(t *testing.T) {
	tests := []struct {
		name string
		spec string
		opts Options
		want Info
	}{
		{"command", "python -m srv", Options{}, Info{Transport: Stdio, Argv: []string{"python", "-m", "srv"}}},
		{"command quoted", `node "my server.js" --x='a b'`, Options{}, Info{Transport: Stdio, Argv: []string{"node", "my server.js", "--x=a b"}}},
		{"command forced stdio", "srv", Options{Transport: Stdio}, Info{Transport: Stdio, Argv: []string{"srv"}}},
		{"command with env and dir", "srv", Options{Env: []string{"A=1"}, Dir: "/tmp", StderrPath: "/tmp/e.log"},
			Info{Transport: Stdio, Argv: []string{"srv"}, StderrPath: "/tmp/e.log"}},
		{"builtin", "testserver", Options{Executable: "/bin/mcpspec"},
			Info{Transport: Stdio, Builtin: true, Argv: []string{"/bin/mcpspec", "testserver", "--transport", "stdio"}}},
		{"builtin with flags", "  testserver --hang-first-call --delay 1s ", Options{Executable: "/bin/mcpspec"},
			Info{Transport: Stdio, Builtin: true, Argv: []string{"/bin/mcpspec", "testserver", "--transport", "stdio", "--hang-first-call", "--delay", "1s"}}},
		{"testserver not first word", "./testserver", Options{}, Info{Transport: Stdio, Argv: []string{"./testserver"}}},
		{"http auto", "http://127.0.0.1:8080/mcp", Options{}, Info{Transport: Auto, URL: "http://127.0.0.1:8080/mcp"}},
		{"https auto", "https://example.test/mcp", Options{}, Info{Transport: Auto, URL: "https://example.test/mcp"}},
		{"uppercase scheme", "HTTP://127.0.0.1:1/", Options{}, Info{Transport: Auto, URL: "http://127.0.0.1:1/"}},
		{"http forced", "http://127.0.0.1:8080/mcp", Options{Transport: HTTP}, Info{Transport: HTTP, URL: "http://127.0.0.1:8080/mcp"}},
		{"sse forced", "http://127.0.0.1:8080/sse", Options{Transport: SSE}, Info{Transport: SSE, URL: "http://127.0.0.1:8080/sse"}},
		{"header on http", "http://127.0.0.1:8080/mcp", Options{Header: http.Header{"Authorization": {"Bearer x"}}},
			Info{Transport: Auto, URL: "http://127.0.0.1:8080/mcp"}},
		{"password redacted", "http://user:secret@127.0.0.1:8080/mcp", Options{}, Info{Transport: Auto, URL: "http://user:xxxxx@127.0.0.1:8080/mcp"}},
		{"ws", "ws://127.0.0.1:9000/mcp", Options{}, Info{Transport: WS, URL: "ws://127.0.0.1:9000/mcp"}},
		{"wss forced", "wss://127.0.0.1:9000/", Options{Transport: WS}, Info{Transport: WS, URL: "wss://127.0.0.1:9000/"}},
		{"tcp", "tcp://127.0.0.1:7070", Options{}, Info{Transport: TCP, URL: "tcp://127.0.0.1:7070"}},
		{"tcp ipv6", "tcp://[::1]:7070", Options{}, Info{Transport: TCP, URL: "tcp://[::1]:7070"}},
		{"tcp bare host:port when forced", "127.0.0.1:7070", Options{Transport: TCP}, Info{Transport: TCP, URL: "tcp://127.0.0.1:7070"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(tt.spec, &tt.opts)
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tt.spec, err)
			}
			tt.want.Spec = tt.spec
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Resolve(%q) mismatch (-want +got):\n%s", tt.spec, diff)
			}
			if got.String() == "" {
				t.Errorf("empty String() for %+v", got)
			}
		})
	}
}

func TestResolveErrors(t *testing.T) {
	tests := []struct {
		name   string
		spec   string
		opts   Options
		reason string // substring of Error.Reason
	}{
		{"empty", "", Options{}, "empty server SPEC"},
		{"blank", "  \t", Options{}, "empty server SPEC"},
		{"unknown transport", "srv", Options{Transport: "carrier-pigeon"}, `unknown transport "carrier-pigeon"`},
		{"unterminated quote", `srv 'x`, Options{}, "cannot split"},
		{"command with forced http", "srv", Options{Transport: HTTP}, "--transport http needs a URL"},
		{"command with header", "srv", Options{Header: http.Header{"X": {"1"}}}, "--header applies to HTTP"},
		{"url with forced stdio", "http://127.0.0.1:1/", Options{Transport: Stdio}, "--transport stdio needs a command line"},
		{"url with env", "http://127.0.0.1:1/", Options{Env: []string{"A=1"}}, "--server-env applies"},
		{"url with dir", "ws://127.0.0.1:1/", Options{Dir: "/tmp"}, "working directory"},
		{"no host", "http:///mcp", Options{}, "no host"},
		{"bad scheme", "ftp://127.0.0.1/x", Options{}, `unsupported URL scheme "ftp"`},
		{"ws with forced http", "ws://127.0.0.1:1/", Options{Transport: HTTP}, "does not match the URL scheme"},
		{"http with forced ws", "http://127.0.0.1:1/", Options{Transport: WS}, "does not match the URL scheme"},
		{"tcp without port", "tcp://127.0.0.1", Options{}, "needs a port"},
		{"tcp with path", "tcp://127.0.0.1:1/mcp", Options{}, "has no path"},
		{"tcp with header", "tcp://127.0.0.1:1", Options{Header: http.Header{"X": {"1"}}}, "--header applies"},
		{"bad url", "http://127.0.0.1:port/", Options{}, "not a valid URL"},
		{"builtin with transport", "testserver --transport http", Options{Executable: "x"}, "runs over stdio here"},
		{"builtin with addr=", "testserver --addr=127.0.0.1:0", Options{Executable: "x"}, "runs over stdio here"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Resolve(tt.spec, &tt.opts)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Resolve(%q) error = %v, want *spec.Error", tt.spec, err)
			}
			if !strings.Contains(e.Reason, tt.reason) {
				t.Errorf("reason = %q, want it to contain %q", e.Reason, tt.reason)
			}
			if e.Hint == "" {
				t.Errorf("error %q has no hint", e)
			}
			if e.Spec != tt.spec {
				t.Errorf("Spec = %q, want %q", e.Spec, tt.spec)
			}
		})
	}
}

func TestInfoString(t *testing.T) {
	tests := []struct {
		info Info
		want string
	}{
		{Info{Transport: Stdio, Argv: []string{"node", "my server.js"}}, "stdio: node 'my server.js'"},
		{Info{Transport: Stdio, Builtin: true, Argv: []string{"/x/mcpspec", "testserver", "--transport", "stdio"}}, "stdio: built-in reference server (testserver --transport stdio)"},
		{Info{Transport: Auto, URL: "http://h/mcp"}, "Streamable HTTP, falling back to HTTP+SSE: http://h/mcp"},
		{Info{Transport: WS, URL: "ws://h/"}, "WebSocket: ws://h/"},
		{Info{Transport: TCP, URL: "tcp://h:1"}, "TCP: tcp://h:1"},
	}
	for _, tt := range tests {
		if got := tt.info.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestParseDialers(t *testing.T) {
	h := http.Header{"Authorization": {"Bearer t"}}
	tests := []struct {
		spec string
		opts Options
		want transport.Dialer
	}{
		{"srv --flag 'a b'", Options{Env: []string{"A=1"}, Dir: "/tmp", StderrPath: "/tmp/e.log"},
			stdio.Command{Path: "srv", Args: []string{"--flag", "a b"}, Env: []string{"A=1"}, Dir: "/tmp", StderrPath: "/tmp/e.log"}},
		{"srv -v", Options{ShutdownGrace: 3 * time.Second}, stdio.Command{Path: "srv", Args: []string{"-v"}, Grace: 3 * time.Second}},
		{"testserver --hang-first-call", Options{Executable: "/bin/mcpspec"},
			stdio.Command{Path: "/bin/mcpspec", Args: []string{"testserver", "--transport", "stdio", "--hang-first-call"}}},
		{" HTTP://127.0.0.1:8080/mcp ", Options{Header: h}, streamable.Auto{Dialer: streamable.Dialer{URL: "http://127.0.0.1:8080/mcp", Header: h}}},
		{"http://u:pw@127.0.0.1:8080/mcp", Options{Transport: HTTP}, streamable.Dialer{URL: "http://u:pw@127.0.0.1:8080/mcp"}},
		{"http://127.0.0.1:8080/sse", Options{Transport: SSE, Header: h}, sse.Dialer{URL: "http://127.0.0.1:8080/sse", Header: h}},
		{"ws://127.0.0.1:8080/ws", Options{Header: h}, ws.Dialer{URL: "ws://127.0.0.1:8080/ws", Header: h}},
		{"tcp://127.0.0.1:7070", Options{}, tcp.Dialer{Addr: "127.0.0.1:7070"}},
		{"127.0.0.1:7070", Options{Transport: TCP}, tcp.Dialer{Addr: "127.0.0.1:7070"}},
	}
	for _, tt := range tests {
		d, _, err := Parse(tt.spec, &tt.opts)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.spec, err)
			continue
		}
		if diff := cmp.Diff(tt.want, d); diff != "" {
			t.Errorf("Parse(%q) dialer mismatch (-want +got):\n%s", tt.spec, diff)
		}
	}
	if _, ok := any(streamable.Auto{}).(interface{ Fallback() transport.Dialer }); !ok {
		t.Error("streamable.Auto has no Fallback: the http(s) SPEC would not fall back to HTTP+SSE")
	}
}

// TestMaxMessageSizeAndAbortReachEveryDialer checks that the size limit reaches every
// transport, and Abort the stdio one.
func TestMaxMessageSizeAndAbortReachEveryDialer(t *testing.T) {
	abort := make(chan struct{})
	o := &Options{MaxMessageSize: 1 << 26, Abort: abort}
	for _, s := range []string{"python srv.py", "http://127.0.0.1:1/mcp", "ws://127.0.0.1:1/ws", "tcp://127.0.0.1:1"} {
		d, _, err := Parse(s, o)
		if err != nil {
			t.Fatal(err)
		}
		var got int
		switch d := d.(type) {
		case stdio.Command:
			got = d.MaxFrameSize
			if d.Abort != (<-chan struct{})(abort) {
				t.Errorf("%s: Abort not passed on", s)
			}
		case streamable.Auto:
			got = d.Dialer.MaxFrameSize
		case ws.Dialer:
			got = d.MaxFrameSize
		case tcp.Dialer:
			got = d.MaxFrameSize
		default:
			t.Fatalf("%s: dialer %T", s, d)
		}
		if got != 1<<26 {
			t.Errorf("%s: MaxFrameSize = %d, want %d", s, got, 1<<26)
		}
	}
	for _, tr := range []Transport{HTTP, SSE} {
		d, _, err := Parse("http://127.0.0.1:1/mcp", &Options{Transport: tr, MaxMessageSize: 4096})
		if err != nil {
			t.Fatal(err)
		}
		switch d := d.(type) {
		case streamable.Dialer:
			if d.MaxFrameSize != 4096 {
				t.Errorf("http: MaxFrameSize = %d", d.MaxFrameSize)
			}
		case sse.Dialer:
			if d.MaxFrameSize != 4096 {
				t.Errorf("sse: MaxFrameSize = %d", d.MaxFrameSize)
			}
		default:
			t.Fatalf("%s: dialer %T", tr, d)
		}
	}
}
