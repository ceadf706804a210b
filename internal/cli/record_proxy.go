package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/internal/localguard"
	"github.com/mcpspec/mcpspec/session/recording"
	"github.com/mcpspec/mcpspec/session/recording/proxy"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// defaultRecordingDir is where recordings go unless --dir says otherwise.
const defaultRecordingDir = ".mcpspec/recordings"

func dirFlag() cli.Flag {
	return &cli.StringFlag{Name: "dir", Value: defaultRecordingDir, Usage: "the `DIR` recordings are kept in"}
}

func (a *app) proxyCommand() *cli.Command {
	return &cli.Command{
		Name:  "proxy",
		Usage: "stand between a client and a server, pass every frame through unchanged and record it",
		UsageText: "mcpspec proxy --server SPEC [--name NAME] [--dir DIR]                (stdio: a client starts this as its server)\n" +
			"mcpspec proxy --server SPEC --listen 127.0.0.1:PORT [--name NAME]    (Streamable HTTP at http://ADDR/mcp)\n\n" +
			"The recording is DIR/NAME.jsonl (default NAME: the start time). See docs/record.md.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "server", Aliases: []string{"s"}, OnlyOnce: true, Usage: "the server to pass traffic to, a `SPEC` (as for every verb)"},
			&cli.StringFlag{Name: "transport", Usage: "force the upstream transport: stdio, http, sse, ws or tcp (default: from the SPEC)"},
			&cli.StringSliceFlag{Name: "header", Aliases: []string{"H"}, Usage: "HTTP/WebSocket header `K=V` sent upstream (repeatable)"},
			&cli.StringSliceFlag{Name: "server-env", Usage: "environment variable `K=V` for a server started as a command (repeatable)"},
			&durationFlag{Name: "connect-timeout", Value: defaultConnectTimeout, Usage: "deadline for starting or connecting to the server"},
			maxMessageSizeFlag(),
			&cli.StringFlag{Name: "listen", Usage: "serve Streamable HTTP on `ADDR` (host:port, loopback) instead of stdio"},
			&cli.BoolFlag{Name: "allow-remote", Usage: "allow a --listen address other than loopback (anyone who reaches it talks to your server)"},
			&cli.StringFlag{Name: "name", Usage: "the recording's `NAME` (default: the start time, 20260102-150405)"},
			dirFlag(),
			&cli.BoolFlag{Name: "no-record", Usage: "pass traffic through without recording it"},
		},
		Action: a.proxy,
	}
}

// recordingPath is DIR/NAME.jsonl for a valid name; a bad name is a config error.
func recordingPath(dir, name string) (string, error) {
	name = strings.TrimSuffix(name, recording.Ext)
	if !recording.ValidName(name) {
		return "", &Error{Code: ExitConfig, Msg: fmt.Sprintf("recording name %q is not a plain name", name),
			Hint: "use letters, digits, '.', '_' and '-' (at most 100), starting with a letter or digit"}
	}
	return filepath.Join(dir, name+recording.Ext), nil
}

// upstreamDialer turns the server flags of proxy-like verbs into a dialer; the server's
// stderr, when it is a command, also goes to stderr.
func (a *app) upstreamDialer(cmd *cli.Command, stderr io.Writer) (transport.Dialer, spec.Info, error) {
	f := a.serverFlags(cmd)
	if strings.TrimSpace(f.Server) == "" {
		return nil, spec.Info{}, &Error{Code: ExitConfig, Msg: "missing --server",
			Hint: fmt.Sprintf("say which server to pass traffic to, e.g. mcpspec %s --server \"node server.js\"", cmd.Name)}
	}
	if t := f.Transport; t != "" && !isTransport(t) {
		return nil, spec.Info{}, &Error{Code: ExitConfig, Msg: fmt.Sprintf("unknown --transport %q", t), Hint: "use one of: stdio, http, sse, ws, tcp"}
	}
	header, err := parseHeaders(f.Header)
	if err != nil {
		return nil, spec.Info{}, err
	}
	env, err := parseEnv(f.Env)
	if err != nil {
		return nil, spec.Info{}, err
	}
	maxMsg, err := parseMaxMessageSize(f.MaxMessageSize)
	if err != nil {
		return nil, spec.Info{}, err
	}
	d, info, err := spec.Parse(f.Server, &spec.Options{
		Transport: spec.Transport(f.Transport), Header: header, Env: env,
		Executable: a.io.Executable, MaxMessageSize: maxMsg, Abort: a.io.Abort, Stderr: stderr,
	})
	if err != nil {
		return nil, info, specError(err)
	}
	return d, info, nil
}

func isTransport(t string) bool {
	for _, x := range spec.Transports() {
		if string(x) == t {
			return true
		}
	}
	return false
}

// dialUpstream dials d within the connect timeout; a failure is a connection error.
func dialUpstream(ctx context.Context, d transport.Dialer, info spec.Info, timeout time.Duration) (transport.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := d.Dial(dctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &Error{Code: ExitConnection, Msg: "cannot reach the server (" + info.String() + "): " + err.Error(), Err: err,
			Hint: "check the --server SPEC: run it by hand, or try mcpspec tools --server SPEC"}
	}
	return conn, nil
}

func (a *app) proxy(ctx context.Context, cmd *cli.Command) (err error) {
	listen := cmd.String("listen")
	if listen != "" {
		host, _, err := net.SplitHostPort(listen)
		if err != nil {
			return &Error{Code: ExitConfig, Msg: fmt.Sprintf("--listen %q is not host:port", listen), Hint: "e.g. --listen 127.0.0.1:8931"}
		}
		if !localguard.LoopbackHost(host) && !cmd.Bool("allow-remote") {
			return &Error{Code: ExitConfig, Msg: fmt.Sprintf("--listen %q is not a loopback address", listen),
				Hint: "use 127.0.0.1:PORT, or add --allow-remote if others must reach this proxy"}
		}
	}
	d, info, err := a.upstreamDialer(cmd, a.io.Stderr)
	if err != nil {
		return err
	}
	var rec *recording.Writer
	if !cmd.Bool("no-record") {
		name := cmd.String("name")
		if name == "" {
			name = time.Now().Format("20060102-150405")
		}
		path, err := recordingPath(cmd.String("dir"), name)
		if err != nil {
			return err
		}
		rec, err = recording.Create(path, recording.Header{Mcpspec: buildVersion(), Server: info.Spec, Transport: string(info.Transport)},
			&recording.WriterOptions{Mask: a.masker.Mask})
		if errors.Is(err, recording.ErrExists) {
			return &Error{Code: ExitConfig, Msg: "a recording named " + name + " exists already (" + path + ")",
				Hint: "choose another --name, or remove it with mcpspec record delete " + name}
		}
		if err != nil {
			return &Error{Code: ExitRuntime, Msg: "cannot create the recording: " + err.Error(), Err: err}
		}
		defer func() {
			cerr := rec.Close()
			fmt.Fprintf(a.io.Stderr, "mcpspec proxy: recorded %d frames to %s\n", rec.Frames(), rec.Path())
			if cerr != nil && err == nil {
				err = &Error{Code: ExitRuntime, Msg: "the recording is incomplete: " + cerr.Error(), Err: cerr}
			}
		}()
	}
	connectTimeout := cmd.Duration("connect-timeout")
	if connectTimeout <= 0 {
		return &Error{Code: ExitConfig, Msg: "--connect-timeout must be positive", Hint: "e.g. --connect-timeout 10s"}
	}
	opts := &proxy.Options{Recorder: rec, OnFault: func(dir recording.Direction, ferr error) {
		fmt.Fprintf(a.io.Stderr, "mcpspec proxy: a %s frame was not passed on: %v\n", dir, ferr)
	}}
	if listen == "" {
		conn, err := dialUpstream(ctx, d, info, connectTimeout)
		if err != nil {
			return err
		}
		// Frames go out exactly as they came: the client's channel is the process's own stdout.
		return a.proxyResult(proxy.Stdio(ctx, a.term.Stdin, a.term.Stdout, conn, opts))
	}
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return &Error{Code: ExitConfig, Msg: "cannot listen: " + err.Error(), Err: err, Hint: "pick a free port, or :0 for any"}
	}
	conn, err := dialUpstream(ctx, d, info, connectTimeout)
	if err != nil {
		l.Close()
		return err
	}
	fmt.Fprintf(a.io.Stdout, "http://%s/mcp\n", l.Addr())
	a.flush()
	return a.proxyResult(proxy.Serve(ctx, l, proxy.NewHTTP(conn, opts)))
}

// proxyResult maps how a proxy ended to an exit: the client leaving is success, the server
// leaving first a connection error.
func (a *app) proxyResult(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, proxy.ErrUpstreamEnded):
		var ee *transport.ExitError
		msg := "the server ended the connection before the client did"
		if errors.As(err, &ee) {
			msg = "the server ended the connection before the client did: " + ee.Error()
		}
		return &Error{Code: ExitConnection, Msg: msg, Err: err, Hint: "the server's stderr above says why"}
	}
	return err
}
