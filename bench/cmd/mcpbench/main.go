//go:build unix

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpspec/mcpspec/bench"
)

func main() {
	var cfg bench.Config
	flag.IntVar(&cfg.N, "n", 20000, "calls per measured run, at most")
	flag.DurationVar(&cfg.Duration, "duration", 0, "time per measured run, at most (default 3s)")
	flag.IntVar(&cfg.Concurrency, "c", 32, "concurrent callers of the concurrent runs")
	flag.IntVar(&cfg.InflightStdio, "inflight-stdio", 1000, "pending calls on one stdio session (-1 skips)")
	flag.IntVar(&cfg.InflightHTTP, "inflight-http", 10000, "pending calls over Streamable HTTP (-1 skips)")
	flag.IntVar(&cfg.InflightH2C, "inflight-h2c", 10000, "pending calls over Streamable HTTP on HTTP/2 without TLS (-1 skips)")
	flag.StringVar(&cfg.Bin, "bin", "", "mcpspec binary to run as the server (default: build ./cmd/mcpspec)")
	quiet := flag.Bool("q", false, "no progress lines on stderr")
	flag.Parse()
	if !*quiet {
		cfg.Progress = os.Stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := bench.Harness(ctx, cfg)
	if r != nil {
		r.WriteTables(os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpbench:", err)
		os.Exit(1)
	}
}
