package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/internal/cli/mcpserve"
)

// mcpShutdown bounds the HTTP server's shutdown once mcpspec mcp is interrupted.
const mcpShutdown = 5 * time.Second

func (a *app) mcpCommand() *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "serve mcpspec's verbs as MCP tools for agents (stdio, or loopback HTTP with a token)",
		UsageText: "mcpspec mcp [--transport stdio|http] [--listen 127.0.0.1:PORT] [--allow FILE]\n\n" +
			"Tools: list_tools, call_tool, run_collection, deadlock, race, head_of_line, fuzz, probe,\n" +
			"load, compare_runs, summarize_report. A server argument must be testserver, a server named\n" +
			"in a collection (*.yaml) under the working directory, or a line of --allow FILE; paths stay\n" +
			"in the working directory. Over HTTP, mcpspec listens on loopback only and prints a bearer\n" +
			"token on stderr; requests need it, and a loopback Host and Origin (docs/mcp-server.md).\n\n" +
			"Exit codes: 0 the client went away · 3 bad flags or allowlist · 130 interrupted.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "transport", Value: "stdio", Usage: "`T`: stdio (the client starts mcpspec mcp) or http (Streamable HTTP on --listen)"},
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:0", Usage: "with --transport http: the loopback `ADDR` to listen on (port 0: any free port)"},
			&cli.StringFlag{Name: "allow", Usage: "`FILE` of server SPECs the tools may start, one per line (# comments), besides testserver and the collections' servers"},
		},
		Action: a.mcpServe,
	}
}

func (a *app) mcpServe(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Present() {
		return usageError(cmd, fmt.Errorf("unexpected argument %q", cmd.Args().First()))
	}
	transport := cmd.String("transport")
	if transport != "stdio" && transport != "http" {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("--transport %q: want stdio or http", transport), Hint: "leave it out for stdio"}
	}
	if transport == "http" {
		if err := mcpserve.CheckListen(cmd.String("listen")); err != nil {
			return &Error{Code: ExitConfig, Msg: err.Error(), Hint: "use --listen 127.0.0.1:PORT; to reach it from elsewhere, tunnel to the loopback port (ssh -L)"}
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return &Error{Code: ExitRuntime, Msg: "working directory: " + err.Error(), Err: err}
	}
	policy, err := mcpserve.LoadPolicy(wd, cmd.String("allow"))
	if err != nil {
		return &Error{Code: ExitConfig, Msg: err.Error(), Hint: "--allow FILE holds one server SPEC per line", Err: err}
	}
	srv, err := mcpserve.New(&mcpserve.Options{Run: a.runVerb, Policy: policy, Version: buildVersion()})
	if err != nil {
		return &Error{Code: ExitRuntime, Msg: err.Error(), Err: err}
	}
	if transport == "stdio" {
		// A client that closes stdin after its requests still gets their answers (up to
		// a tool's own time cap), rather than a server that stops at end of input.
		drain := mcpserve.NewDrain(a.term.Stdin, a.term.Stdout, mcpserve.DrainWait)
		t := &mcp.IOTransport{Reader: io.NopCloser(drain.Reader()), Writer: nopWriteCloser{drain.Writer()}}
		if err := srv.Run(ctx, t); err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
			return &Error{Code: ExitRuntime, Msg: "mcp: " + err.Error(), Err: err}
		}
		return ctx.Err()
	}
	return a.mcpHTTP(ctx, srv, cmd.String("listen"))
}

// mcpHTTP serves srv over Streamable HTTP on listen (loopback, checked) at /mcp, behind
// [mcpserve.Guard] with a new token, until ctx ends.
func (a *app) mcpHTTP(ctx context.Context, srv *mcp.Server, listen string) error {
	token, err := mcpserve.NewToken()
	if err != nil {
		return &Error{Code: ExitRuntime, Msg: "token: " + err.Error(), Err: err}
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", listen)
	if err != nil {
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("--listen %s: %v", listen, err), Hint: "pick a free port, or 0 for any", Err: err}
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpserve.Guard(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil), port, token))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	fmt.Fprintf(a.io.Stderr, "mcpspec mcp: Streamable HTTP at http://%s/mcp\nmcpspec mcp: token %s (send Authorization: Bearer TOKEN)\n", ln.Addr(), token)
	a.flush()
	select {
	case err := <-served:
		return &Error{Code: ExitRuntime, Msg: "mcp: " + err.Error(), Err: err}
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mcpShutdown)
	defer cancel()
	_ = hs.Shutdown(sctx)
	<-served
	return ctx.Err()
}

// runVerb runs one verb in process for a tool of mcpspec mcp: no stdin (an --args of - reads
// nothing), the process's executable and temporary directory.
func (a *app) runVerb(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return int(Run(ctx, append([]string{"mcpspec"}, args...), &IO{
		Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr,
		Executable: a.io.Executable, TempDir: a.io.TempDir, Abort: a.io.Abort,
	}))
}

// nopWriteCloser is a writer whose Close does nothing: the process's stdout stays open.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
