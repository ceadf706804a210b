//go:build unix

package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/shirou/gopsutil/v4/load"
)

// VersusConfig sizes a [Versus] run. Zero fields take the defaults noted.
type VersusConfig struct {
	// Echo is the echo server binary ([BuildEcho]); "" builds one into a temporary directory.
	Echo string
	// Mcpspec is the mcpspec binary whose `load` command is measured; "" or one without the
	// load command leaves that column out.
	Mcpspec string
	// MCPStress is the mcp-stress binary; "" leaves that column out.
	MCPStress string
	// Concurrency is the callers of every client (default 10).
	Concurrency int
	// Duration is each client's run (default 10s; mcp-stress counts whole seconds).
	Duration time.Duration
	// Progress, if set, receives a line as each measurement starts.
	Progress io.Writer
}

// VersusResults is a [Versus] run's figures: throughput and latency of each client against the
// same echo server, each with a fresh server process.
type VersusResults struct {
	Config VersusConfig
	// Raw and Ours are the raw client and mcpspec's session, closed model.
	Raw, Ours Latencies
	// Stress is mcp-stress's summary (nil: not run).
	Stress *StressSummary
	// Load is `mcpspec load`'s (nil: not run).
	Load *LoadSummary
	// Skipped says why a column is missing.
	Skipped []string
	// LoadAvg is the machine's 1-minute load average before and after the run (-1: unknown).
	LoadAvg [2]float64
}

// Versus measures, in one run and against the echo server, the raw client and mcpspec's
// session (Concurrency callers each), mcp-stress (-c Concurrency) and `mcpspec load
// --concurrency Concurrency` (its whole path: histograms, timeline, trace, run directory).
func Versus(ctx context.Context, cfg VersusConfig) (*VersusResults, error) {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 10
	}
	if cfg.Duration <= 0 {
		cfg.Duration = 10 * time.Second
	}
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
	target := Target{Transport: Stdio, Argv: []string{cfg.Echo}}
	for _, k := range []struct {
		kind Kind
		into *Latencies
	}{{Raw, &r.Raw}, {Ours, &r.Ours}} {
		progress("echo server: %s, %d callers, %v", k.kind, cfg.Concurrency, cfg.Duration)
		c, err := Dial(ctx, k.kind, target)
		if err != nil {
			return r, err
		}
		*k.into, err = Closed(ctx, c, cfg.Concurrency, cfg.Duration)
		c.Close()
		if err != nil {
			return r, fmt.Errorf("%s: %w", k.kind, err)
		}
	}
	if cfg.MCPStress == "" {
		r.Skipped = append(r.Skipped, "mcp-stress: no binary given")
	} else {
		progress("echo server: mcp-stress -c %d -d %v", cfg.Concurrency, cfg.Duration)
		s, err := RunMCPStress(ctx, cfg.MCPStress, cfg.Duration, cfg.Concurrency, "echo", []string{cfg.Echo})
		if err != nil {
			return r, err
		}
		r.Stress = &s
	}
	switch {
	case cfg.Mcpspec == "":
		r.Skipped = append(r.Skipped, "mcpspec load: no binary given")
	case !HasLoad(ctx, cfg.Mcpspec):
		r.Skipped = append(r.Skipped, "mcpspec load: "+cfg.Mcpspec+" has no load command (the load engine has not landed)")
	default:
		progress("echo server: mcpspec load --concurrency %d --duration %v", cfg.Concurrency, cfg.Duration)
		s, err := RunLoad(ctx, cfg.Mcpspec, cfg.Duration, []string{
			"--server", cfg.Echo, "--scenario", "sustained", "--concurrency", strconv.Itoa(cfg.Concurrency),
			"--duration", cfg.Duration.String(), "--tool", "echo", "--args", `{"text":"hello"}`,
		})
		if err != nil {
			return r, err
		}
		if s.Errors.Total > 0 {
			return r, fmt.Errorf("bench: mcpspec load: %d errors against the echo server", s.Errors.Total)
		}
		r.Load = &s
	}
	return r, nil
}

// WriteTables prints r as a markdown table with ratios.
func (r *VersusResults) WriteTables(w io.Writer) {
	c := r.Config
	fmt.Fprintf(w, "### Throughput against the bench's echo server (stdio, %d concurrent, %v each; %s/%s, %d CPUs, %s, load average %s)\n\n",
		c.Concurrency, c.Duration, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), loadRange(r.LoadAvg))
	header(w, "client", "calls/s", "p50", "p99", "÷ raw", "÷ mcp-stress")
	stress := 0.0
	if r.Stress != nil {
		stress = r.Stress.RequestsPerSecond
	}
	raw := r.Raw.PerSecond()
	line := func(name string, rps float64, p50, p99 string) {
		vs := "–"
		if stress > 0 {
			vs = ratio(rps, stress)
		}
		row(w, name, fmt.Sprintf("%.0f", rps), p50, p99, ratio(rps, raw), vs)
	}
	line("raw client (closed, "+strconv.Itoa(c.Concurrency)+" callers)", raw, ms(r.Raw.Percentile(50)), ms(r.Raw.Percentile(99)))
	line("mcpspec session (closed)", r.Ours.PerSecond(), ms(r.Ours.Percentile(50)), ms(r.Ours.Percentile(99)))
	if r.Load != nil {
		line("`mcpspec load --concurrency "+strconv.Itoa(c.Concurrency)+"`", r.Load.Throughput.RequestsPerSec,
			fmt.Sprintf("%.2f ms", r.Load.Latency.P50), fmt.Sprintf("%.2f ms", r.Load.Latency.P99))
	}
	if r.Stress != nil {
		line("mcp-stress -c "+strconv.Itoa(c.Concurrency), stress,
			fmt.Sprintf("%.2f ms", r.Stress.Overall.P50), fmt.Sprintf("%.2f ms", r.Stress.Overall.P99))
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(w, "\n(%s)", s)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
}

// TruthConfig sizes a [Truth] run. Zero fields take the defaults noted.
type TruthConfig struct {
	// Mcpspec is the mcpspec binary serving as the reference server; its testserver must have
	// the delay and stall flags (they come with the load engine), and its load command, if
	// any, is measured too. Required.
	Mcpspec string
	// MCPStress is the mcp-stress binary; "" leaves that column out.
	MCPStress string
	// Model is the injected latency (default: 10ms + exponential of mean 10ms, a 2s stall 8s
	// after the first call).
	Model DelayModel
	// Rate is the open model's arrivals per second (default 200); Workers the closed model's
	// callers (default 10).
	Rate    float64
	Workers int
	// Duration is each client's run (default 20s).
	Duration time.Duration
	// Seed makes the server's delays reproducible (default "truth").
	Seed string
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
		cfg.Model = DelayModel{Fixed: 10 * time.Millisecond, ExpMean: 10 * time.Millisecond, StallAfter: 8 * time.Second, StallFor: 2 * time.Second}
	}
	if cfg.Rate <= 0 {
		cfg.Rate = 200
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 10
	}
	if cfg.Duration <= 0 {
		cfg.Duration = 20 * time.Second
	}
	if cfg.Seed == "" {
		cfg.Seed = "truth"
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
	for _, k := range []struct {
		name string
		run  func(Client) (Latencies, error)
		into *Latencies
	}{
		{"open", func(c Client) (Latencies, error) { return Open(ctx, c, cfg.Rate, cfg.Duration, maxInFlight) }, &r.Open},
		// No warm-up: the stall's clock starts at the server's first call.
		{"closed", func(c Client) (Latencies, error) { return closed(ctx, c, cfg.Workers, cfg.Duration) }, &r.Closed},
	} {
		progress("latency truth: raw client, %s model, %v", k.name, cfg.Duration)
		c, err := Dial(ctx, Raw, target)
		if err != nil {
			return r, err
		}
		*k.into, err = k.run(c)
		c.Close()
		if err != nil {
			return r, fmt.Errorf("raw %s: %w", k.name, err)
		}
	}
	if HasLoad(ctx, cfg.Mcpspec) {
		progress("latency truth: mcpspec load --rate %g, %v", cfg.Rate, cfg.Duration)
		server := "testserver"
		for _, f := range flags {
			server += " " + f
		}
		s, err := RunLoad(ctx, cfg.Mcpspec, cfg.Duration+cfg.Model.StallFor, []string{
			"--server", server, "--scenario", "sustained", "--rate", strconv.FormatFloat(cfg.Rate, 'f', -1, 64),
			"--max-in-flight", strconv.Itoa(maxInFlight), "--duration", cfg.Duration.String(),
			"--tool", "echo", "--args", `{"text":"hello"}`,
		})
		if err != nil {
			return r, err
		}
		r.Load = &s
	} else {
		r.Skipped = append(r.Skipped, "mcpspec load: "+cfg.Mcpspec+" has no load command")
	}
	if cfg.MCPStress == "" {
		r.Skipped = append(r.Skipped, "mcp-stress: no binary given")
	} else {
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
	fmt.Fprintf(w, "### Latency truth: `mcpspec testserver` with %v + exponential(mean %v) per call and one %v stall %v after the first call; %v per client (%d CPUs, load average %s)\n\n",
		m.Fixed, m.ExpMean, m.StallFor, m.StallAfter, c.Duration, runtime.NumCPU(), loadRange(r.LoadAvg))
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
	fromMs := func(v float64) time.Duration { return time.Duration(v * 1e6) }
	load := func(p float64) (time.Duration, bool) {
		if r.Load == nil {
			return 0, false
		}
		l := r.Load.Latency
		v, ok := map[float64]float64{50: l.P50, 90: l.P90, 99: l.P99, 99.9: l.P999, 100: l.Max}[p]
		return fromMs(v), ok
	}
	stress := func(p float64) (time.Duration, bool) {
		if r.Stress == nil {
			return 0, false
		}
		l := r.Stress.Overall
		v, ok := map[float64]float64{50: l.P50, 99: l.P99, 100: l.Max}[p]
		return fromMs(v), ok
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
