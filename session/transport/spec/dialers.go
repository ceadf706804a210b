package spec

import (
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/sse"
	"github.com/mcpspec/mcpspec/session/transport/stdio"
	"github.com/mcpspec/mcpspec/session/transport/streamable"
	"github.com/mcpspec/mcpspec/session/transport/tcp"
	"github.com/mcpspec/mcpspec/session/transport/ws"
)

// newDialer builds the dialer for a resolved SPEC; addr is the URL (host:port for TCP) to dial.
func newDialer(info Info, addr string, o *Options) (transport.Dialer, error) {
	switch info.Transport {
	case Stdio:
		return stdio.Command{
			Path:         info.Argv[0],
			Args:         info.Argv[1:],
			Env:          o.Env,
			OnlyEnv:      o.OnlyEnv,
			Dir:          o.Dir,
			StderrPath:   o.StderrPath,
			Stderr:       o.Stderr,
			MaxFrameSize: o.MaxMessageSize,
			Abort:        o.Abort,
			Grace:        o.ShutdownGrace,
		}, nil
	case Auto:
		return streamable.Auto{Dialer: streamable.Dialer{URL: addr, Header: o.Header, MaxFrameSize: o.MaxMessageSize}}, nil
	case HTTP:
		return streamable.Dialer{URL: addr, Header: o.Header, MaxFrameSize: o.MaxMessageSize}, nil
	case SSE:
		return sse.Dialer{URL: addr, Header: o.Header, MaxFrameSize: o.MaxMessageSize}, nil
	case WS:
		return ws.Dialer{URL: addr, Header: o.Header, MaxFrameSize: o.MaxMessageSize}, nil
	case TCP:
		return tcp.Dialer{Addr: addr, MaxFrameSize: o.MaxMessageSize}, nil
	}
	return nil, &Error{Spec: info.Spec, Reason: string(info.Transport) + " transport", Hint: "this build of mcpspec lacks it", Err: ErrUnavailable}
}
