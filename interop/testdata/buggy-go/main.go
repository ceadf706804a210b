// Command buggy-go serves one of the buggy/healthy twin servers written with the official Go
// SDK, over stdio or Streamable HTTP. The twins of a pair differ only in their bug: see the
// file of each pair. interop/buggy_gosdk_test.go builds it and runs mcpspec's detectors on it.
//
//	buggy-go -pair lazyinit -variant buggy                 # stdio
//	buggy-go -pair hol -variant healthy -http 127.0.0.1:0  # prints "listening on http://…/mcp"
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pairs builds each pair's server; buggy selects the twin.
var pairs = map[string]func(buggy bool) *mcp.Server{
	"lazyinit": lazyInitServer,
	"race":     raceServer,
	"hol":      holServer,
	"leak":     leakServer,
	"crash":    crashServer,
}

func main() {
	pair := flag.String("pair", "", "the pair: lazyinit, race, hol, leak or crash")
	variant := flag.String("variant", "", "buggy or healthy")
	addr := flag.String("http", "", "serve Streamable HTTP on this address instead of stdio")
	flag.Parse()
	build, ok := pairs[*pair]
	if !ok || (*variant != "buggy" && *variant != "healthy") {
		flag.Usage()
		os.Exit(64)
	}
	srv := build(*variant == "buggy")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *addr == "" {
		if err := srv.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
			log.Fatal(err)
		}
		return
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on http://%s/mcp\n", ln.Addr())
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	hs := &http.Server{Handler: mux}
	go func() {
		<-ctx.Done()
		_ = hs.Close()
	}()
	if err := hs.Serve(ln); err != nil && err != http.ErrServerClosed {
		log.Fatal(err)
	}
}

// newServer is the SDK server every pair starts from.
func newServer(name string) *mcp.Server {
	return mcp.NewServer(&mcp.Implementation{Name: name, Version: "1.0.0"},
		&mcp.ServerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

// text is a result with one text block.
func text(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}
