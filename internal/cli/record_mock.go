package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/internal/localguard"
	"github.com/mcpspec/mcpspec/mcptest/mock"
)

func (a *app) mockCommand() *cli.Command {
	return &cli.Command{
		Name:      "mock",
		Usage:     "serve a recording as an MCP server: each request gets its recorded answer",
		ArgsUsage: "NAME",
		UsageText: "mcpspec mock NAME [--transport stdio|http] [--listen 127.0.0.1:0] [--match exact|method|sequential] [--latency recorded|0]\n\n" +
			"As a SPEC: --server \"mcpspec mock NAME\". Over http the URL is the first line on stdout.\n" +
			"exact: same method and params (ids, progress tokens and _meta aside); method: the first\n" +
			"unused answer of the method; sequential: the recorded requests in order. initialize,\n" +
			"server/discover and ping are always answered by method; an unmatched request gets a\n" +
			"JSON-RPC error naming the nearest recorded request.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "transport", Value: "stdio", Usage: "serve over stdio or http (Streamable HTTP)"},
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:0", Usage: "with --transport http, the `ADDR` to listen on (loopback)"},
			&cli.BoolFlag{Name: "allow-remote", Usage: "allow a --listen address other than loopback"},
			&cli.StringFlag{Name: "match", Value: string(mock.Exact), Usage: "how a request finds its answer: exact, method or sequential"},
			&cli.StringFlag{Name: "latency", Value: "0", Usage: "recorded: answer after the recorded server time; 0: at once"},
			dirFlag(),
		},
		Action: a.mock,
	}
}

func (a *app) mock(ctx context.Context, cmd *cli.Command) error {
	match := mock.Match(cmd.String("match"))
	if !slices.Contains(mock.Matches(), match) {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("unknown --match %q", match), Hint: "use exact, method or sequential"}
	}
	latency := cmd.String("latency")
	if latency != "recorded" && latency != "0" {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("unknown --latency %q", latency), Hint: "use recorded or 0"}
	}
	tr := cmd.String("transport")
	if tr != "stdio" && tr != "http" {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("unknown --transport %q", tr), Hint: "the mock serves stdio or http"}
	}
	_, rec, err := loadRecording(cmd)
	if err != nil {
		return err
	}
	m, err := mock.New(rec, &mock.Options{Match: match, Latency: latency == "recorded"})
	if err != nil {
		return &Error{Code: ExitConfig, Msg: err.Error(), Hint: "record a session with answers: mcpspec proxy --server SPEC"}
	}
	if tr == "stdio" {
		// The MCP channel is the process's own stdout, unmasked: answers go out as recorded.
		return m.ServeStdio(ctx, a.term.Stdin, a.term.Stdout)
	}
	listen := cmd.String("listen")
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("--listen %q is not host:port", listen), Hint: "e.g. --listen 127.0.0.1:8931"}
	}
	if !localguard.LoopbackHost(host) && !cmd.Bool("allow-remote") {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("--listen %q is not a loopback address", listen),
			Hint: "use 127.0.0.1:PORT, or add --allow-remote if others must reach the mock"}
	}
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return &Error{Code: ExitConfig, Msg: "cannot listen: " + err.Error(), Err: err, Hint: "pick a free port, or :0 for any"}
	}
	srv := &http.Server{Handler: m, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	fmt.Fprintf(a.io.Stdout, "http://%s/mcp\n", l.Addr())
	a.flush()
	select {
	case err = <-errc:
	case <-ctx.Done():
		err = ctx.Err()
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
