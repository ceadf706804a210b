//go:build unix

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcpspec/mcpspec/bench"
)

func main() {
	var (
		d         = flag.Duration("d", 10*time.Second, "each client's run against the echo server")
		c         = flag.Int("c", 10, "concurrent callers against the echo server, and the closed model's workers")
		truthD    = flag.Duration("truth-d", 30*time.Second, "each client's run in the latency-truth experiment")
		rate      = flag.Float64("rate", 200, "the open model's arrivals per second in the latency-truth experiment")
		bin       = flag.String("bin", "", "mcpspec binary: its load command and its testserver (default: build ./cmd/mcpspec)")
		echo      = flag.String("echo", "", "echo server binary (default: build ./bench/cmd/echoserver)")
		mcpStress = flag.String("mcp-stress", bench.MCPStressPath, "mcp-stress binary (\"\" leaves it out)")
		rounds    = flag.Int("rounds", 3, "interleaved rounds of every client against the echo server (the median is shown)")
		only      = flag.String("only", "", "run only versus, truth, http or http-truth")
		httpC     = flag.String("http-c", "10,100", "Streamable HTTP: the closed model's in-flight counts (comma-separated; \"\" none)")
		httpRates = flag.String("http-rates", "200,1000", "Streamable HTTP: the open model's arrivals per second (comma-separated; \"\" none)")
		quiet     = flag.Bool("q", false, "no progress lines on stderr")
	)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hc, err := parseList(*httpC, strconv.Atoi)
	if err == nil {
		var hr []float64
		hr, err = parseList(*httpRates, func(s string) (float64, error) { return strconv.ParseFloat(s, 64) })
		if err == nil {
			err = run(ctx, *d, *c, *rounds, *truthD, *rate, *bin, *echo, *mcpStress, *only, *quiet, hc, hr)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
}

// parseList parses a comma-separated list with parse.
func parseList[T any](s string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := parse(f)
		if err != nil {
			return nil, fmt.Errorf("list %q: %w", s, err)
		}
		out = append(out, v)
	}
	return out, nil
}

func run(ctx context.Context, d time.Duration, c, rounds int, truthD time.Duration, rate float64, bin, echo, mcpStress, only string, quiet bool, httpC []int, httpRates []float64) error {
	switch only {
	case "", "versus", "truth", "http", "http-truth":
	default:
		return fmt.Errorf("-only %q: versus, truth, http or http-truth", only)
	}
	var progress *os.File
	if !quiet {
		progress = os.Stderr
	}
	dir, err := os.MkdirTemp("", "loadbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if bin == "" {
		if bin, err = bench.Build(ctx, dir); err != nil {
			return err
		}
	}
	if mcpStress != "" {
		if _, err := os.Stat(mcpStress); err != nil {
			fmt.Fprintf(os.Stderr, "loadbench: mcp-stress left out: %v (cd interop && npm ci)\n", err)
			mcpStress = ""
		}
	}
	if only == "" || only == "versus" {
		r, err := bench.Versus(ctx, bench.VersusConfig{Echo: echo, Mcpspec: bin, MCPStress: mcpStress, Concurrency: c, Duration: d, Rounds: rounds, Progress: progress})
		if r != nil {
			r.WriteTables(os.Stdout)
		}
		if err != nil {
			return err
		}
	}
	for _, tr := range []bench.Transport{bench.Stdio, bench.HTTP} {
		if only != "" && only != map[bench.Transport]string{bench.Stdio: "truth", bench.HTTP: "http-truth"}[tr] {
			continue
		}
		r, err := bench.Truth(ctx, bench.TruthConfig{Mcpspec: bin, MCPStress: mcpStress, Rate: rate, Workers: c, Duration: truthD, Transport: tr, Progress: progress})
		if errors.Is(err, bench.ErrNoDelayFlags) {
			fmt.Fprintln(os.Stderr, "loadbench: latency truth left out:", err)
			break
		}
		if r != nil {
			r.WriteTables(os.Stdout)
		}
		if err != nil {
			return err
		}
	}
	if (only == "" || only == "http") && (len(httpC) > 0 || len(httpRates) > 0) {
		r, err := bench.HTTPVersus(ctx, bench.HTTPVersusConfig{Mcpspec: bin, Closed: httpC, Rates: httpRates, Duration: d, Rounds: rounds, Progress: progress})
		if r != nil {
			r.WriteTables(os.Stdout)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
