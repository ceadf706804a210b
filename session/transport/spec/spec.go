package spec

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/session/transport"
)

// Transport names a way of reaching a server.
type Transport string

// The transports a SPEC can select. [Auto] is chosen for http(s) URLs unless one is forced.
const (
	// Stdio starts the server as a child process and speaks over its stdin/stdout.
	Stdio Transport = "stdio"
	// Auto tries Streamable HTTP and falls back to legacy HTTP+SSE.
	Auto Transport = "auto"
	// HTTP is Streamable HTTP only.
	HTTP Transport = "http"
	// SSE is the legacy HTTP+SSE transport (2024-11-05).
	SSE Transport = "sse"
	// WS is WebSocket, one message per text frame.
	WS Transport = "ws"
	// TCP is newline-delimited JSON-RPC over a TCP socket.
	TCP Transport = "tcp"
)

// Transports lists the transports a user may force with --transport.
func Transports() []Transport { return []Transport{Stdio, HTTP, SSE, WS, TCP} }

// BuiltinName is the first word of a SPEC that selects the built-in reference server.
const BuiltinName = "testserver"

// Options tunes how a SPEC becomes a dialer. A nil *Options means defaults.
type Options struct {
	// Transport forces a transport ("" guesses from the SPEC: a URL's scheme, else stdio).
	Transport Transport
	// Header is sent with every HTTP request and the WebSocket handshake.
	Header http.Header
	// Env holds extra KEY=VALUE entries added to a stdio server's environment, which otherwise
	// is inherited from this process.
	Env []string
	// OnlyEnv makes Env a stdio server's whole environment, inheriting nothing.
	OnlyEnv bool
	// Dir is a stdio server's working directory ("" = the current directory).
	Dir string
	// StderrPath is the file that receives a stdio server's stderr ("" = keep only its tail in
	// memory).
	StderrPath string
	// Stderr, when set, also receives a stdio server's stderr as it arrives (see
	// [stdio.Command.Stderr]).
	Stderr io.Writer
	// Executable is the program that runs the built-in server for a "testserver" SPEC
	// ("" = [os.Executable]).
	Executable string
	// MaxMessageSize is the largest message accepted from the server, in bytes, on every
	// transport (0 = [transport.MaxFrameSize]).
	MaxMessageSize int
	// Abort, when closed, makes a stdio server's Close kill its process tree at once instead
	// of shutting it down gracefully (see [stdio.Command.Abort]).
	Abort <-chan struct{}
	// ShutdownGrace is how long a stdio server has to exit once its stdin is closed, before
	// SIGTERM (0 = [stdio.DefaultGrace]; see [stdio.Command.Grace]).
	ShutdownGrace time.Duration
}

// Info describes what a SPEC resolved to, for messages, --explain and JSON output.
type Info struct {
	// Spec is the SPEC as given.
	Spec string `json:"spec"`
	// Transport is the transport that will be used ([Auto] for an http(s) URL not forced).
	Transport Transport `json:"transport"`
	// Argv is the command line of a stdio server, program first.
	Argv []string `json:"argv,omitempty"`
	// URL is the address of a network server (with any password redacted).
	URL string `json:"url,omitempty"`
	// Builtin is true for the built-in reference server ("testserver").
	Builtin bool `json:"builtin,omitempty"`
	// StderrPath is where a stdio server's stderr goes, if anywhere.
	StderrPath string `json:"stderrPath,omitempty"`
}

// String is a one-line description: "stdio: python -m srv" or "http (auto): https://…".
func (i Info) String() string {
	switch i.Transport {
	case Stdio:
		if i.Builtin {
			return "stdio: built-in reference server (" + Join(i.Argv[1:]) + ")"
		}
		return "stdio: " + Join(i.Argv)
	case Auto:
		return "Streamable HTTP, falling back to HTTP+SSE: " + i.URL
	case HTTP:
		return "Streamable HTTP: " + i.URL
	case SSE:
		return "HTTP+SSE: " + i.URL
	case WS:
		return "WebSocket: " + i.URL
	case TCP:
		return "TCP: " + i.URL
	}
	return string(i.Transport) + ": " + i.Spec
}

// Error is a SPEC or option that cannot be used. Hint says how to fix it.
type Error struct {
	// Spec is the SPEC as given.
	Spec string
	// Reason says what is wrong with it.
	Reason string
	// Hint is the suggested fix, if any.
	Hint string
	// Err is the cause, if any (such as [ErrUnavailable]).
	Err error
}

// Error renders `server "SPEC": reason`, followed by the cause when there is one.
func (e *Error) Error() string {
	s := fmt.Sprintf("server %q: %s", e.Spec, e.Reason)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause, such as [ErrUnavailable] or a *[SplitError].
func (e *Error) Unwrap() error { return e.Err }

// ErrUnavailable is wrapped by an [Error] when the transport a SPEC needs is not built into this
// binary.
var ErrUnavailable = errors.New("transport not available")

var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// Parse resolves a SPEC into a dialer and a description of it. It starts nothing and opens no
// connection: that happens in the dialer's Dial. Problems with the SPEC or the options are
// reported as *[Error].
func Parse(s string, o *Options) (transport.Dialer, Info, error) {
	if o == nil {
		o = &Options{}
	}
	info, addr, err := resolve(s, o)
	if err != nil {
		return nil, info, err
	}
	d, err := newDialer(info, addr, o)
	if err != nil {
		return nil, info, err
	}
	return d, info, nil
}

// Resolve classifies a SPEC without building a dialer: what [Parse] would use, for --explain
// and messages. Problems are reported as *[Error].
func Resolve(s string, o *Options) (Info, error) {
	if o == nil {
		o = &Options{}
	}
	info, _, err := resolve(s, o)
	return info, err
}

// resolve is [Resolve], also returning the unredacted URL of a network server to dial.
func resolve(s string, o *Options) (Info, string, error) {
	info := Info{Spec: s}
	fail := func(reason, hint string, err error) (Info, string, error) {
		return info, "", &Error{Spec: s, Reason: reason, Hint: hint, Err: err}
	}
	trimmed := strings.TrimSpace(s)
	if trimmed == "" {
		return fail("empty server SPEC", "pass a command line (--server \"python -m my_server\"), a URL (--server http://127.0.0.1:8080/mcp) or --server testserver", nil)
	}
	if o.Transport != "" && !slices.Contains(Transports(), o.Transport) {
		return fail(fmt.Sprintf("unknown transport %q", o.Transport), "use one of: stdio, http, sse, ws, tcp", nil)
	}

	if schemeRE.MatchString(trimmed) {
		return resolveURL(info, trimmed, o, fail)
	}
	if o.Transport == TCP {
		// Accept a bare host:port when TCP is forced.
		return resolveURL(info, "tcp://"+trimmed, o, fail)
	}
	if o.Transport != "" && o.Transport != Stdio {
		return fail(fmt.Sprintf("--transport %s needs a URL, but the SPEC is a command line", o.Transport),
			fmt.Sprintf("start the server yourself and pass its URL (for example %s), or drop --transport to run the command over stdio", exampleURL(o.Transport)), nil)
	}
	if len(o.Header) > 0 {
		return fail("--header applies to HTTP and WebSocket servers, not to a server started as a command", "drop --header, or pass the server's URL", nil)
	}
	argv, err := Split(trimmed)
	if err != nil {
		return fail("cannot split the command line", "check the quotes: the SPEC is split like a shell command, e.g. --server \"node server.js --name 'my server'\"", err)
	}
	info.Transport = Stdio
	info.StderrPath = o.StderrPath
	if argv[0] != BuiltinName {
		info.Argv = argv
		return info, "", nil
	}
	for _, a := range argv[1:] {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && (name == "transport" || name == "addr" || name == "url-file") {
			return fail(fmt.Sprintf("the built-in server runs over stdio here; %s is not allowed in --server", a),
				"to test it over another transport, start it yourself (mcpspec testserver --transport http --addr 127.0.0.1:0) and pass the URL it prints", nil)
		}
	}
	exe := o.Executable
	if exe == "" {
		exe, err = os.Executable()
		if err != nil {
			return fail("cannot find this program to run the built-in server", "install mcpspec somewhere readable, or run a server yourself", err)
		}
	}
	info.Builtin = true
	info.Argv = append([]string{exe, BuiltinName, "--transport", "stdio"}, argv[1:]...)
	return info, "", nil
}

func resolveURL(info Info, s string, o *Options, fail func(string, string, error) (Info, string, error)) (Info, string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return fail("not a valid URL", "check the address, e.g. http://127.0.0.1:8080/mcp", err)
	}
	if len(o.Env) > 0 {
		return fail("--server-env applies to a server started as a command, not to a URL", "drop --server-env, or set the variables where the server runs", nil)
	}
	if o.Dir != "" {
		return fail("a working directory applies to a server started as a command, not to a URL", "drop the working directory option", nil)
	}
	if u.Host == "" {
		return fail("the URL has no host", "write it as scheme://host:port/path, e.g. http://127.0.0.1:8080/mcp", nil)
	}
	info.URL = u.Redacted()
	scheme := strings.ToLower(u.Scheme)
	var want []string
	switch o.Transport {
	case "":
		switch scheme {
		case "http", "https":
			info.Transport = Auto
		case "ws", "wss":
			info.Transport = WS
		case "tcp":
			info.Transport = TCP
		default:
			return fail(fmt.Sprintf("unsupported URL scheme %q", u.Scheme), "use http(s)://, ws(s)://, tcp://host:port, or a command line to start the server over stdio", nil)
		}
	case Stdio:
		return fail("--transport stdio needs a command line, but the SPEC is a URL", "pass the command that starts the server, or drop --transport", nil)
	case HTTP, SSE:
		want = []string{"http", "https"}
	case WS:
		want = []string{"ws", "wss"}
	case TCP:
		want = []string{"tcp"}
	}
	if info.Transport == "" {
		if !slices.Contains(want, scheme) {
			return fail(fmt.Sprintf("--transport %s does not match the URL scheme %q", o.Transport, u.Scheme),
				fmt.Sprintf("use a URL like %s, or drop --transport", exampleURL(o.Transport)), nil)
		}
		info.Transport = o.Transport
	}
	if info.Transport == TCP {
		if len(o.Header) > 0 {
			return fail("--header applies to HTTP and WebSocket servers, not to TCP", "drop --header", nil)
		}
		if _, port, err := net.SplitHostPort(u.Host); err != nil || port == "" {
			return fail("a TCP address needs a port", "write it as tcp://host:port, e.g. tcp://127.0.0.1:7070", err)
		}
		if u.Path != "" && u.Path != "/" {
			return fail("a TCP address has no path", "write it as tcp://host:port", nil)
		}
		return info, u.Host, nil
	}
	u.Scheme = scheme
	return info, u.String(), nil
}

func exampleURL(t Transport) string {
	switch t {
	case WS:
		return "ws://127.0.0.1:8080/mcp"
	case TCP:
		return "tcp://127.0.0.1:7070"
	case SSE:
		return "http://127.0.0.1:8080/sse"
	}
	return "http://127.0.0.1:8080/mcp"
}
