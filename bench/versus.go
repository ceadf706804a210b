//go:build unix

package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/shirou/gopsutil/v4/load"
)

// VersusConfig sizes a [Versus] run. Zero fields take the defaults noted.
type VersusConfig struct {
	// Echo is the echo server binary ([BuildEcho]); "" builds one into a temporary directory.
	Echo string
	// Mcpspec is the mcpspec binary whose `load` command is measured; "" or one without the
	// load command leaves that row out.
	Mcpspec string
	// MCPStress is the mcp-stress binary; "" leaves that row out.
	MCPStress string
	// Concurrency is the callers of every client (default 10).
	Concurrency int
	// Duration is each client's run (default 10s; mcp-stress counts whole seconds).
	Duration time.Duration
	// Rounds is how many times every client runs, interleaved (default 1); the table shows
	// the median round and the range.
	Rounds int
	// Progress, if set, receives a line as each measurement starts.
	Progress io.Writer
}

// Figure is one client's throughput and latency in one round.
type Figure struct {
	PerSecond float64
	P50, P99  time.Duration
	// CPUPerCall is the client's CPU per completed call (zero: not measured).
	CPUPerCall time.Duration
}

// VersusRow is one client's figures, one per round.
type VersusRow struct {
	Client string
	Rounds []Figure
}

// median returns the round with the median throughput (the lower middle one of an even
// count) and the lowest and highest throughput.
func (r VersusRow) median() (mid Figure, lo, hi float64) {
	f := slices.Clone(r.Rounds)
	slices.SortFunc(f, func(a, b Figure) int { return cmp.Compare(a.PerSecond, b.PerSecond) })
	return f[(len(f)-1)/2], f[0].PerSecond, f[len(f)-1].PerSecond
}

// VersusResults is a [Versus] run's figures: throughput and latency of each client against the
// same echo server, each run with a fresh server process.
type VersusResults struct {
	Config VersusConfig
	// Rows holds, in table order: the raw client, mcpspec's session, `mcpspec load` (if
	// run) and mcp-stress (if run).
	Rows []VersusRow
	// Skipped says why a row is missing.
	Skipped []string
	// LoadAvg is the machine's 1-minute load average before and after the run (-1: unknown).
	LoadAvg [2]float64
}

// Row returns the figures of the client named name (nil: not run).
func (r *VersusResults) Row(name string) *VersusRow {
	for i := range r.Rows {
		if r.Rows[i].Client == name {
			return &r.Rows[i]
		}
	}
	return nil
}

// The client names of [VersusResults.Rows].
const (
	RowRaw    = "raw client"
	RowOurs   = "mcpspec session"
	RowLoad   = "mcpspec load"
	RowStress = "mcp-stress"
)

// label is how the table names a client run with n callers.
func label(client string, n int) string {
	c := strconv.Itoa(n)
	switch client {
	case RowLoad:
		return "`mcpspec load --concurrency " + c + "`"
	case RowStress:
		return "mcp-stress -c " + c
	}
	return client + " (closed, " + c + " callers)"
}

// Versus measures, against the echo server, the raw client and mcpspec's session
// (Concurrency callers each), `mcpspec load --concurrency Concurrency` (its whole path:
// histograms, timeline, trace, run directory) and mcp-stress (-c Concurrency), all in one
// run, Rounds times interleaved.
func Versus(ctx context.Context, cfg VersusConfig) (*VersusResults, error) {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 10
	}
	if cfg.Duration <= 0 {
		cfg.Duration = 10 * time.Second
	}
	cfg.Rounds = max(cfg.Rounds, 1)
	progress := progressTo(cfg.Progress)
	if cfg.Echo == "" {
		dir, err := os.MkdirTemp("", "mcpbench-echo-")
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		defer os.RemoveAll(dir)
		if cfg.Echo, err = BuildEcho(ctx, dir); err != nil {
			return nil, err
		}
	}
	r := &VersusResults{Config: cfg}
	r.LoadAvg[0] = loadAverage(ctx)
	defer func() { r.LoadAvg[1] = loadAverage(ctx) }()
	type client struct {
		name string
		run  func() (Figure, error)
	}
	target := Target{Transport: Stdio, Argv: []string{cfg.Echo}}
	session := func(kind Kind) func() (Figure, error) {
		return func() (Figure, error) {
			c, err := Dial(ctx, kind, target)
			if err != nil {
				return Figure{}, err
			}
			defer c.Close()
			l, err := Closed(ctx, c, cfg.Concurrency, cfg.Duration)
			if err != nil {
				return Figure{}, fmt.Errorf("%s: %w", kind, err)
			}
			return Figure{PerSecond: l.PerSecond(), P50: l.Percentile(50), P99: l.Percentile(99)}, nil
		}
	}
	clients := []client{{RowRaw, session(Raw)}, {RowOurs, session(Ours)}}
	switch {
	case cfg.Mcpspec == "":
		r.Skipped = append(r.Skipped, "mcpspec load: no binary given")
	case !HasLoad(ctx, cfg.Mcpspec):
		r.Skipped = append(r.Skipped, "mcpspec load: "+cfg.Mcpspec+" has no load command (the load engine has not landed)")
	default:
		clients = append(clients, client{RowLoad, func() (Figure, error) {
			s, err := RunLoad(ctx, cfg.Mcpspec, cfg.Duration, []string{
				"--server", cfg.Echo, "--scenario", "sustained", "--concurrency", strconv.Itoa(cfg.Concurrency),
				"--duration", cfg.Duration.String(), "--tool", "echo", "--args", `{"text":"hello"}`,
			})
			if err != nil {
				return Figure{}, err
			}
			if s.Errors.Total > 0 {
				return Figure{}, fmt.Errorf("bench: mcpspec load: %d errors against the echo server", s.Errors.Total)
			}
			return Figure{PerSecond: s.Throughput.RequestsPerSec, P50: msDuration(s.Latency.P50), P99: msDuration(s.Latency.P99)}, nil
		}})
	}
	if cfg.MCPStress == "" {
		r.Skipped = append(r.Skipped, "mcp-stress: no binary given")
	} else {
		clients = append(clients, client{RowStress, func() (Figure, error) {
			s, err := RunMCPStress(ctx, cfg.MCPStress, cfg.Duration, cfg.Concurrency, "echo", []string{cfg.Echo})
			if err != nil {
				return Figure{}, err
			}
			if s.TotalErrors > 0 {
				return Figure{}, fmt.Errorf("bench: mcp-stress: %d errors against the echo server", s.TotalErrors)
			}
			return Figure{PerSecond: s.RequestsPerSecond, P50: msDuration(s.Overall.P50), P99: msDuration(s.Overall.P99)}, nil
		}})
	}
	r.Rows = make([]VersusRow, len(clients))
	for i, c := range clients {
		r.Rows[i].Client = c.name
	}
	for round := range cfg.Rounds {
		for i, c := range clients {
			progress("echo server, round %d/%d: %s, %d concurrent, %v", round+1, cfg.Rounds, c.name, cfg.Concurrency, cfg.Duration)
			f, err := c.run()
			if err != nil {
				return r, err
			}
			r.Rows[i].Rounds = append(r.Rows[i].Rounds, f)
		}
	}
	return r, nil
}

// WriteTables prints r as a markdown table with ratios of the median rounds.
func (r *VersusResults) WriteTables(w io.Writer) {
	c := r.Config
	fmt.Fprintf(w, "### Throughput against the bench's echo server (stdio, %d concurrent, %v each, median of %d interleaved rounds; %s/%s, %d CPUs, %s, load average %s)\n\n",
		c.Concurrency, c.Duration, c.Rounds, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), loadRange(r.LoadAvg))
	header(w, "client", "calls/s", "range", "p50", "p99", "÷ raw", "÷ mcp-stress")
	var raw, stress float64
	if row := r.Row(RowRaw); row != nil && len(row.Rounds) > 0 {
		f, _, _ := row.median()
		raw = f.PerSecond
	}
	if row := r.Row(RowStress); row != nil && len(row.Rounds) > 0 {
		f, _, _ := row.median()
		stress = f.PerSecond
	}
	for _, vr := range r.Rows {
		if len(vr.Rounds) == 0 {
			continue
		}
		f, lo, hi := vr.median()
		vs := "–"
		if stress > 0 {
			vs = ratio(f.PerSecond, stress)
		}
		row(w, label(vr.Client, c.Concurrency), fmt.Sprintf("%.0f", f.PerSecond), fmt.Sprintf("%.0f–%.0f", lo, hi),
			ms(f.P50), ms(f.P99), ratio(f.PerSecond, raw), vs)
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(w, "\n(%s)", s)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
}

// msDuration converts milliseconds to a duration.
func msDuration(v float64) time.Duration { return time.Duration(v * 1e6) }

// TruthConfig sizes a [Truth] run. Zero fields take the defaults noted.
type TruthConfig struct {
	// Mcpspec is the mcpspec binary serving as the reference server; its testserver must have
	// the delay and stall flags (they come with the load engine), and its load command, if
	// any, is measured too. Required.
	Mcpspec string
	// MCPStress is the mcp-stress binary; "" leaves that column out.
	MCPStress string
	// Model is the injected latency (default: 20ms + exponential of mean 20ms, a 2s stall 10s
	// after the first call: a fifteenth of a 30 s run's arrivals fall in it, so p90 lies among
	// the calls it misses and p99 among those it holds).
	Model DelayModel
	// Rate is the open model's arrivals per second (default 200); Workers the closed model's
	// callers (default 10).
	Rate    float64
	Workers int
	// Duration is each client's run (default 30s).
	Duration time.Duration
	// Seed makes the server's delays reproducible (default "truth").
	Seed string
	// Transport is the wire (default [Stdio]); with [HTTP] every client gets a fresh
	// `testserver --transport http` child and mcp-stress is left out.
	Transport Transport
	// Progress, if set, receives a line as each measurement starts.
	Progress io.Writer
}

// TruthResults is a [Truth] run's figures.
type TruthResults struct {
	Config TruthConfig
	// Truth is the model's latencies for the open schedule ([DelayModel.Truth]).
	Truth Latencies
	// Open is the raw client sending on the open schedule; Closed the raw client with Workers
	// callers.
	Open, Closed Latencies
	// Stress is mcp-stress's summary (nil: not run); Load `mcpspec load --rate`'s (nil: not run).
	Stress  *StressSummary
	Load    *LoadSummary
	Skipped []string
	// LoadAvg is the machine's 1-minute load average before and after the run (-1: unknown).
	LoadAvg [2]float64
}

// ErrNoDelayFlags means the mcpspec binary's testserver cannot inject delays and stalls.
var ErrNoDelayFlags = errors.New("bench: this mcpspec's testserver has no --delay-exp/--stall-for (they come with the load engine)")

// SupportsDelay reports whether the testserver of the mcpspec binary bin takes the flags of
// [DelayModel.TestserverFlags].
func SupportsDelay(ctx context.Context, bin string) bool {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	args := append([]string{"testserver", "--transport", "stdio"}, DelayModel{Fixed: 1, ExpMean: 1, StallAfter: 1, StallFor: 1}.TestserverFlags("x")...)
	_, err := runPeer(ctx, bin, args)
	return err == nil
}

// Truth measures how close each client comes to the latency a server really gives: the
// reference server with a known delay distribution and one 2 s stall, against the raw client
// on the open schedule (latency from the intended send time), `mcpspec load --rate`, the raw
// client in the closed model and mcp-stress (closed). Each client gets a fresh server.
func Truth(ctx context.Context, cfg TruthConfig) (*TruthResults, error) {
	if cfg.Model == (DelayModel{}) {
		cfg.Model = DelayModel{Fixed: 20 * time.Millisecond, ExpMean: 20 * time.Millisecond, StallAfter: 10 * time.Second, StallFor: 2 * time.Second}
	}
	if cfg.Rate <= 0 {
		cfg.Rate = 200
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 10
	}
	if cfg.Duration <= 0 {
		cfg.Duration = 30 * time.Second
	}
	if cfg.Seed == "" {
		cfg.Seed = "truth"
	}
	if cfg.Transport == "" {
		cfg.Transport = Stdio
	}
	if cfg.Transport != Stdio && cfg.Transport != HTTP {
		return nil, fmt.Errorf("bench: latency truth: transport %q: stdio or http", cfg.Transport)
	}
	if !SupportsDelay(ctx, cfg.Mcpspec) {
		return nil, ErrNoDelayFlags
	}
	progress := progressTo(cfg.Progress)
	r := &TruthResults{Config: cfg}
	r.LoadAvg[0] = loadAverage(ctx)
	defer func() { r.LoadAvg[1] = loadAverage(ctx) }()
	r.Truth = Latencies{Calls: cfg.Model.Truth(cfg.Rate, cfg.Duration, 50, 1)}
	flags := cfg.Model.TestserverFlags(cfg.Seed)
	target := Target{Transport: Stdio, Argv: append([]string{cfg.Mcpspec, "testserver", "--transport", "stdio"}, flags...)}
	// The open schedule holds up to a stall's worth of calls in flight, and more.
	maxInFlight := int(cfg.Rate*(cfg.Model.StallFor+time.Second).Seconds()) + 1000
	// withServer runs use with the SPEC of a fresh server and, over HTTP, a connection pool
	// with room for maxInFlight calls.
	withServer := func(use func(t Target, spec string) error) error {
		if cfg.Transport == Stdio {
			server := "testserver"
			for _, f := range flags {
				server += " " + f
			}
			return use(target, server)
		}
		srv, err := StartHTTP(ctx, cfg.Mcpspec, flags...)
		if err != nil {
			return err
		}
		defer srv.Close()
		hc := NewHTTPClient(maxInFlight)
		defer hc.CloseIdleConnections()
		return use(Target{Transport: HTTP, URL: srv.URL, HTTPClient: hc}, srv.URL)
	}
	if cfg.Transport == HTTP {
		if _, err := RaiseFileLimit(uint64(maxInFlight) + 1024); err != nil {
			return r, err
		}
	}
	for _, k := range []struct {
		name string
		run  func(Client) (Latencies, error)
		into *Latencies
	}{
		{"open", func(c Client) (Latencies, error) { return Open(ctx, c, cfg.Rate, cfg.Duration, maxInFlight) }, &r.Open},
		// No warm-up: the stall's clock starts at the server's first call.
		{"closed", func(c Client) (Latencies, error) { return closed(ctx, c, cfg.Workers, cfg.Duration) }, &r.Closed},
	} {
		progress("latency truth (%s): raw client, %s model, %v", cfg.Transport, k.name, cfg.Duration)
		err := withServer(func(t Target, _ string) error {
			c, err := Dial(ctx, Raw, t)
			if err != nil {
				return err
			}
			defer c.Close()
			*k.into, err = k.run(c)
			return err
		})
		if err != nil {
			return r, fmt.Errorf("raw %s: %w", k.name, err)
		}
	}
	if HasLoad(ctx, cfg.Mcpspec) {
		progress("latency truth (%s): mcpspec load --rate %g, %v", cfg.Transport, cfg.Rate, cfg.Duration)
		err := withServer(func(_ Target, server string) error {
			s, err := RunLoad(ctx, cfg.Mcpspec, cfg.Duration+cfg.Model.StallFor, []string{
				"--server", server, "--scenario", "sustained", "--rate", strconv.FormatFloat(cfg.Rate, 'f', -1, 64),
				"--max-in-flight", strconv.Itoa(maxInFlight), "--duration", cfg.Duration.String(),
				"--tool", "echo", "--args", `{"text":"hello"}`,
			})
			r.Load = &s
			return err
		})
		if err != nil {
			r.Load = nil
			return r, err
		}
	} else {
		r.Skipped = append(r.Skipped, "mcpspec load: "+cfg.Mcpspec+" has no load command")
	}
	switch {
	case cfg.Transport != Stdio:
		r.Skipped = append(r.Skipped, "mcp-stress: measured over stdio only")
	case cfg.MCPStress == "":
		r.Skipped = append(r.Skipped, "mcp-stress: no binary given")
	default:
		progress("latency truth: mcp-stress -c %d, %v", cfg.Workers, cfg.Duration)
		s, err := RunMCPStress(ctx, cfg.MCPStress, cfg.Duration, cfg.Workers, "echo", target.Argv)
		if err != nil {
			return r, err
		}
		r.Stress = &s
	}
	return r, nil
}

// WriteTables prints r as a markdown table: each client's percentiles next to the truth.
func (r *TruthResults) WriteTables(w io.Writer) {
	c := r.Config
	m := c.Model
	fmt.Fprintf(w, "### Latency truth (%s): `mcpspec testserver` with %v + exponential(mean %v) per call and one %v stall %v after the first call; %v per client (%d CPUs, load average %s)\n\n",
		cmp.Or(c.Transport, Stdio), m.Fixed, m.ExpMean, m.StallFor, m.StallAfter, c.Duration, runtime.NumCPU(), loadRange(r.LoadAvg))
	header(w, "percentile", "truth (open schedule)", fmt.Sprintf("raw, open %g/s", c.Rate), fmt.Sprintf("`mcpspec load --rate %g`", c.Rate),
		fmt.Sprintf("raw, closed %d", c.Workers), fmt.Sprintf("mcp-stress -c %d", c.Workers))
	type col struct {
		get func(p float64) (time.Duration, bool)
	}
	lat := func(l Latencies) func(float64) (time.Duration, bool) {
		return func(p float64) (time.Duration, bool) {
			if p == 100 {
				return l.Max(), true
			}
			return l.Percentile(p), true
		}
	}
	load := func(p float64) (time.Duration, bool) {
		if r.Load == nil {
			return 0, false
		}
		l := r.Load.Latency
		v, ok := map[float64]float64{50: l.P50, 90: l.P90, 99: l.P99, 99.9: l.P999, 100: l.Max}[p]
		return msDuration(v), ok
	}
	stress := func(p float64) (time.Duration, bool) {
		if r.Stress == nil {
			return 0, false
		}
		l := r.Stress.Overall
		v, ok := map[float64]float64{50: l.P50, 99: l.P99, 100: l.Max}[p]
		return msDuration(v), ok
	}
	cols := []col{{lat(r.Truth)}, {lat(r.Open)}, {load}, {lat(r.Closed)}, {stress}}
	for _, p := range []float64{50, 90, 99, 99.9, 100} {
		name := "p" + strconv.FormatFloat(p, 'f', -1, 64)
		if p == 100 {
			name = "max"
		}
		truth, _ := cols[0].get(p)
		cells := []string{name, ms(truth)}
		for _, c := range cols[1:] {
			v, ok := c.get(p)
			switch {
			case !ok:
				cells = append(cells, "–")
			case p == 100:
				cells = append(cells, ms(v))
			default:
				cells = append(cells, fmt.Sprintf("%s (%s)", ms(v), ratio(float64(v), float64(truth))))
			}
		}
		row(w, cells...)
	}
	calls := func(n int64) string { return strconv.FormatInt(n, 10) }
	cells := []string{"calls", calls(int64(len(r.Truth.Calls) / 50)), calls(int64(len(r.Open.Calls)))}
	if r.Load != nil {
		cells = append(cells, calls(r.Load.Latency.Count))
	} else {
		cells = append(cells, "–")
	}
	cells = append(cells, calls(int64(len(r.Closed.Calls))))
	if r.Stress != nil {
		cells = append(cells, calls(r.Stress.TotalRequests))
	} else {
		cells = append(cells, "–")
	}
	row(w, cells...)
	if lag := (Latencies{Calls: r.Open.SendLag}); len(lag.Calls) > 0 {
		fmt.Fprintf(w, "\nThe raw open client sent its calls late by %s at the median, %s at p99 (its own scheduling on this machine, counted in its latencies).\n",
			ms(lag.Percentile(50)), ms(lag.Percentile(99)))
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(w, "\n(%s)", s)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
}

// loadAverage is the machine's 1-minute load average, or -1.
func loadAverage(ctx context.Context) float64 {
	a, err := load.AvgWithContext(ctx)
	if err != nil {
		return -1
	}
	return a.Load1
}

// loadRange formats a load average before and after a run.
func loadRange(a [2]float64) string {
	if a[0] < 0 || a[1] < 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.1f → %.1f", a[0], a[1])
}

// progressTo returns a printer of progress lines to w (nil: none).
func progressTo(w io.Writer) func(format string, args ...any) {
	return func(format string, args ...any) {
		if w != nil {
			fmt.Fprintf(w, format+"\n", args...)
		}
	}
}
