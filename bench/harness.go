//go:build unix

package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// Config sizes a harness run. Zero fields take the defaults noted.
type Config struct {
	// Bin is the mcpspec binary serving as the reference server; "" builds one into a
	// temporary directory.
	Bin string
	// N bounds the calls of each measured run (default 20000).
	N int
	// Duration bounds each measured run (default 3s).
	Duration time.Duration
	// Concurrency is the number of concurrent callers of the concurrent runs (default 32).
	Concurrency int
	// InflightStdio is the number of pending calls on one stdio session (default 1000; negative
	// skips the measurement).
	InflightStdio int
	// InflightHTTP is the number of pending calls over Streamable HTTP (default 10000; negative
	// skips the measurement).
	InflightHTTP int
	// InflightH2C is the number of pending calls over Streamable HTTP on HTTP/2 without TLS
	// (default 10000; negative skips the measurement).
	InflightH2C int
	// Progress, if set, receives a line as each measurement starts.
	Progress io.Writer
}

func (c Config) withDefaults() Config {
	if c.N <= 0 {
		c.N = 20000
	}
	if c.Duration <= 0 {
		c.Duration = 3 * time.Second
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 32
	}
	if c.InflightStdio == 0 {
		c.InflightStdio = 1000
	}
	if c.InflightHTTP == 0 {
		c.InflightHTTP = 10000
	}
	if c.InflightH2C == 0 {
		c.InflightH2C = 10000
	}
	return c
}

// Results is everything a harness run measured.
type Results struct {
	Config Config
	// InMemory holds the client CPU over net.Pipe: [Ours|GoSDK][0: one caller, 1: Concurrency].
	InMemory map[Kind][2]Sample
	// Wire holds the runs against a child server: [transport][kind][0: one caller, 1: Concurrency].
	Wire map[Transport]map[Kind][2]Sample
	// Inflight holds memory per pending call: [transport][kind].
	Inflight map[Transport]map[Kind]InflightSample
	// FileLimit is the RLIMIT_NOFILE soft limit the HTTP in-flight run had.
	FileLimit uint64
}

// Harness runs every measurement in turn, one fresh client (and fresh server process) each.
func Harness(ctx context.Context, cfg Config) (*Results, error) {
	cfg = cfg.withDefaults()
	if cfg.Bin == "" {
		dir, err := os.MkdirTemp("", "mcpbench-")
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		defer os.RemoveAll(dir)
		if cfg.Bin, err = Build(ctx, dir); err != nil {
			return nil, err
		}
	}
	progress := func(format string, args ...any) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, format+"\n", args...)
		}
	}
	r := &Results{
		Config:   cfg,
		InMemory: map[Kind][2]Sample{},
		Wire:     map[Transport]map[Kind][2]Sample{},
		Inflight: map[Transport]map[Kind]InflightSample{},
	}
	loads := [2]Load{
		{Callers: 1, N: cfg.N, Duration: cfg.Duration},
		{Callers: cfg.Concurrency, N: cfg.N, Duration: cfg.Duration},
	}
	for _, kind := range []Kind{Ours, GoSDK} {
		var pair [2]Sample
		for i, l := range loads {
			progress("in-memory  %-8s %2d caller(s)", kind, l.Callers)
			s, err := InMemory(ctx, kind, l)
			if err != nil {
				return r, fmt.Errorf("in-memory %s: %w", kind, err)
			}
			pair[i] = s
		}
		r.InMemory[kind] = pair
	}
	for _, tr := range []Transport{Stdio, HTTP} {
		r.Wire[tr] = map[Kind][2]Sample{}
		for _, kind := range Kinds {
			var pair [2]Sample
			for i, l := range loads {
				progress("%-10s %-8s %2d caller(s)", tr, kind, l.Callers)
				s, err := Wire(ctx, kind, tr, cfg.Bin, l)
				if err != nil {
					return r, fmt.Errorf("%s %s: %w", tr, kind, err)
				}
				pair[i] = s
			}
			r.Wire[tr][kind] = pair
		}
	}
	for _, m := range []struct {
		tr Transport
		n  int
	}{{Stdio, cfg.InflightStdio}, {HTTP, cfg.InflightHTTP}, {H2C, cfg.InflightH2C}} {
		if m.n < 0 {
			continue
		}
		if m.tr == HTTP {
			// The client holds n connections (the server is another process with its own limit).
			lim, err := RaiseFileLimit(uint64(m.n) + 1024)
			if err != nil {
				return r, err
			}
			r.FileLimit = lim
		}
		r.Inflight[m.tr] = map[Kind]InflightSample{}
		for _, kind := range Kinds {
			progress("in-flight  %-8s %s × %d", kind, m.tr, m.n)
			s, err := Inflight(ctx, kind, m.tr, cfg.Bin, m.n)
			if err != nil {
				return r, fmt.Errorf("in-flight %s %s: %w", m.tr, kind, err)
			}
			r.Inflight[m.tr][kind] = s
		}
	}
	return r, nil
}

// Wire measures a fresh client of kind under l against a fresh child server process: for
// stdio the client's own child, for HTTP a `testserver --transport http` started for the run.
func Wire(ctx context.Context, kind Kind, tr Transport, bin string, l Load) (Sample, error) {
	var s Sample
	err := withWire(ctx, kind, tr, bin, l.Callers, func(c Client) error {
		var err error
		s, err = Run(ctx, c, l)
		return err
	})
	return s, err
}

// withWire runs use with a fresh client of kind connected to a fresh child server, whose HTTP
// pool (if any) has room for callers concurrent requests.
func withWire(ctx context.Context, kind Kind, tr Transport, bin string, callers int, use func(Client) error) error {
	t := Target{Transport: tr, Bin: bin}
	if overHTTP(tr) {
		srv, err := StartHTTP(ctx, bin)
		if err != nil {
			return err
		}
		defer srv.Close()
		t.URL = srv.URL
		t.HTTPClient = NewHTTPClientFor(tr, max(DefaultConnections, callers))
		defer t.HTTPClient.CloseIdleConnections()
	}
	c, err := Dial(ctx, kind, t)
	if err != nil {
		return err
	}
	defer c.Close()
	return use(c)
}
