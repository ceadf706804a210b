//go:build unix

package bench

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"time"
)

// HTTPVersusConfig sizes an [HTTPVersus] run. Zero fields take the defaults noted.
type HTTPVersusConfig struct {
	// Mcpspec is the mcpspec binary: the reference server (`testserver --transport http`) and
	// the `load` command measured. Required.
	Mcpspec string
	// Closed lists the closed model's in-flight counts: workers calling back to back (default
	// 10 and 100).
	Closed []int
	// Rates lists the open model's arrivals per second (default 200 and 1000).
	Rates []float64
	// Versions lists the protocol versions, one per era (default [ProtocolVersion], stateful
	// with Mcp-Session-Id, and [StatelessVersion]).
	Versions []string
	// Duration is each client's run (default 10s).
	Duration time.Duration
	// Rounds is how many times every client runs, interleaved (default 3); the table shows the
	// median of the per-round ratios.
	Rounds int
	// Progress, if set, receives a line as each measurement starts.
	Progress io.Writer
}

func (c HTTPVersusConfig) withDefaults() HTTPVersusConfig {
	if len(c.Closed) == 0 && len(c.Rates) == 0 {
		c.Closed, c.Rates = []int{10, 100}, []float64{200, 1000}
	}
	if len(c.Versions) == 0 {
		c.Versions = []string{ProtocolVersion, StatelessVersion}
	}
	if c.Duration <= 0 {
		c.Duration = 10 * time.Second
	}
	if c.Rounds <= 0 {
		c.Rounds = 3
	}
	return c
}

// HTTPCase is one workload of [HTTPVersus]: an era and either a closed model (Closed workers)
// or an open one (Rate arrivals per second).
type HTTPCase struct {
	Version string
	Closed  int
	Rate    float64
}

// String names the case's model as the table does.
func (c HTTPCase) String() string {
	if c.Rate > 0 {
		return "open " + strconv.FormatFloat(c.Rate, 'f', -1, 64) + "/s"
	}
	return "closed " + strconv.Itoa(c.Closed)
}

// era names the case's era.
func (c HTTPCase) era() string {
	if c.Version == StatelessVersion {
		return "stateless " + c.Version
	}
	return "stateful " + c.Version
}

// HTTPVersusRow holds one case's figures, one per round, of the three clients.
type HTTPVersusRow struct {
	Case HTTPCase
	// Raw is the minimal net/http client; Session mcpspec's session layer driven by the same
	// loop; Load `mcpspec load` as a child process (its whole path).
	Raw, Session, Load []Figure
}

// HTTPVersusResults is an [HTTPVersus] run's figures.
type HTTPVersusResults struct {
	Config HTTPVersusConfig
	Rows   []HTTPVersusRow
	// LoadAvg is the machine's 1-minute load average before and after the run (-1: unknown).
	LoadAvg [2]float64
}

// httpOpenInFlight bounds the calls in flight of the open model's raw client and session; it
// is `mcpspec load`'s default --max-in-flight too, and the size of their connection pool.
const httpOpenInFlight = 10000

// HTTPVersus measures, against the reference server over Streamable HTTP (a fresh
// `testserver --transport http` child per client run), a minimal net/http client, mcpspec's
// session driven by the same loop, and `mcpspec load`, for every era and model of cfg, Rounds
// times interleaved.
func HTTPVersus(ctx context.Context, cfg HTTPVersusConfig) (*HTTPVersusResults, error) {
	cfg = cfg.withDefaults()
	if cfg.Mcpspec == "" {
		return nil, fmt.Errorf("bench: http versus: no mcpspec binary")
	}
	progress := progressTo(cfg.Progress)
	r := &HTTPVersusResults{Config: cfg}
	r.LoadAvg[0] = loadAverage(ctx)
	defer func() { r.LoadAvg[1] = loadAverage(ctx) }()
	for _, v := range cfg.Versions {
		for _, n := range cfg.Closed {
			r.Rows = append(r.Rows, HTTPVersusRow{Case: HTTPCase{Version: v, Closed: n}})
		}
		for _, rate := range cfg.Rates {
			r.Rows = append(r.Rows, HTTPVersusRow{Case: HTTPCase{Version: v, Rate: rate}})
		}
	}
	if _, err := RaiseFileLimit(httpOpenInFlight + 1024); err != nil {
		return r, err
	}
	for round := range cfg.Rounds {
		for i := range r.Rows {
			row := &r.Rows[i]
			for _, k := range []struct {
				name string
				into *[]Figure
				run  func(context.Context, string, HTTPCase, time.Duration) (Figure, error)
			}{
				{"raw", &row.Raw, httpClientRun(Raw)},
				{"mcpspec session", &row.Session, httpClientRun(Ours)},
				{"mcpspec load", &row.Load, func(ctx context.Context, bin string, c HTTPCase, d time.Duration) (Figure, error) {
					return httpLoadRun(ctx, bin, c, d)
				}},
			} {
				progress("http, round %d/%d: %s, %s, %s, %v", round+1, cfg.Rounds, k.name, row.Case.era(), row.Case, cfg.Duration)
				f, err := k.run(ctx, cfg.Mcpspec, row.Case, cfg.Duration)
				if err != nil {
					return r, fmt.Errorf("http %s %s %s: %w", row.Case.era(), row.Case, k.name, err)
				}
				*k.into = append(*k.into, f)
			}
		}
	}
	return r, nil
}

// httpClientRun returns a run of a client of kind against a fresh HTTP server: the closed model
// after a warm-up, or the open one from the first call.
func httpClientRun(kind Kind) func(context.Context, string, HTTPCase, time.Duration) (Figure, error) {
	return func(ctx context.Context, bin string, c HTTPCase, d time.Duration) (Figure, error) {
		srv, err := StartHTTP(ctx, bin)
		if err != nil {
			return Figure{}, err
		}
		defer srv.Close()
		conns := max(DefaultConnections, c.Closed)
		if c.Rate > 0 {
			conns = httpOpenInFlight
		}
		hc := NewHTTPClient(conns)
		defer hc.CloseIdleConnections()
		cl, err := Dial(ctx, kind, Target{Transport: HTTP, URL: srv.URL, HTTPClient: hc, ProtocolVersion: c.Version})
		if err != nil {
			return Figure{}, err
		}
		defer cl.Close()
		var l Latencies
		var cpu time.Duration
		if c.Rate > 0 {
			cpu0 := ProcessCPU()
			l, err = Open(ctx, cl, c.Rate, d, httpOpenInFlight)
			cpu = ProcessCPU() - cpu0
		} else {
			if err := warmUp(ctx, cl, latencyWarmUp); err != nil {
				return Figure{}, err
			}
			cpu0 := ProcessCPU()
			l, err = closed(ctx, cl, c.Closed, d)
			cpu = ProcessCPU() - cpu0
		}
		if err != nil {
			return Figure{}, err
		}
		return Figure{PerSecond: l.PerSecond(), P50: l.Percentile(50), P99: l.Percentile(99), CPUPerCall: perCall(cpu, len(l.Calls))}, nil
	}
}

// httpLoadRun runs `mcpspec load` against a fresh HTTP server.
func httpLoadRun(ctx context.Context, bin string, c HTTPCase, d time.Duration) (Figure, error) {
	srv, err := StartHTTP(ctx, bin)
	if err != nil {
		return Figure{}, err
	}
	defer srv.Close()
	args := []string{"--server", srv.URL, "--protocol-version", c.Version, "--scenario", "sustained",
		"--duration", d.String(), "--tool", "echo", "--args", `{"text":"hello"}`}
	if c.Rate > 0 {
		args = append(args, "--rate", strconv.FormatFloat(c.Rate, 'f', -1, 64), "--max-in-flight", strconv.Itoa(httpOpenInFlight))
	} else {
		args = append(args, "--concurrency", strconv.Itoa(c.Closed))
	}
	s, err := RunLoad(ctx, bin, d, args)
	if err != nil {
		return Figure{}, err
	}
	if s.Errors.Total > 0 {
		return Figure{}, fmt.Errorf("bench: mcpspec load: %d errors against the reference server", s.Errors.Total)
	}
	return Figure{PerSecond: s.Throughput.RequestsPerSec, P50: msDuration(s.Latency.P50), P99: msDuration(s.Latency.P99),
		CPUPerCall: perCall(s.CPU, int(s.Throughput.TotalRequests))}, nil
}

// RatioOf is the median over rounds of ours[i].x / raw[i].x, for x picked by get: each round's
// clients ran back to back, so a round's ratio sees one state of the machine.
func RatioOf(ours, raw []Figure, get func(Figure) float64) float64 {
	var rs []float64
	for i := range min(len(ours), len(raw)) {
		if b := get(raw[i]); b > 0 {
			rs = append(rs, get(ours[i])/b)
		}
	}
	if len(rs) == 0 {
		return 0
	}
	slices.Sort(rs)
	return rs[(len(rs)-1)/2]
}

// medianOf is the median over rounds of the figure get picks, as a duration.
func medianOf(f []Figure, get func(Figure) float64) time.Duration {
	v := make([]float64, 0, len(f))
	for _, x := range f {
		v = append(v, get(x))
	}
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return time.Duration(v[(len(v)-1)/2])
}

// The figures [RatioOf] compares.
var (
	figRate = func(f Figure) float64 { return f.PerSecond }
	figP50  = func(f Figure) float64 { return float64(f.P50) }
	figP99  = func(f Figure) float64 { return float64(f.P99) }
	figCPU  = func(f Figure) float64 { return float64(f.CPUPerCall) }
)

// WriteTables prints r as a markdown table: the raw client's median round (its CPU per call
// the median over rounds) and the median per-round ratios of mcpspec's session and `mcpspec
// load` to it. CPU per call is each client's process (the server is another): the raw client
// and the session run in the harness's process, `mcpspec load` in its own, whose start-up and
// reports are in its figure.
func (r *HTTPVersusResults) WriteTables(w io.Writer) {
	c := r.Config
	fmt.Fprintf(w, "### Streamable HTTP against a minimal net/http client (`mcpspec testserver --transport http`, a fresh one per client run; %v each, median of %d interleaved rounds' ratios; %s/%s, %d CPUs, %s, load average %s)\n\n",
		c.Duration, c.Rounds, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), loadRange(r.LoadAvg))
	header(w, "era", "model", "raw calls/s", "raw p50", "raw p99", "raw CPU/call",
		"session calls/s ÷ raw", "session p50 ÷ raw", "session p99 ÷ raw", "session CPU/call ÷ raw",
		"load calls/s ÷ raw", "load p50 ÷ raw", "load p99 ÷ raw", "load CPU/call ÷ raw")
	x := func(v float64) string {
		if v == 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f×", v)
	}
	for _, vr := range r.Rows {
		if len(vr.Raw) == 0 {
			continue
		}
		raw, _, _ := VersusRow{Rounds: vr.Raw}.median()
		row(w, vr.Case.era(), vr.Case.String(), fmt.Sprintf("%.0f", raw.PerSecond), ms(raw.P50), ms(raw.P99), µs(medianOf(vr.Raw, figCPU)),
			x(RatioOf(vr.Session, vr.Raw, figRate)), x(RatioOf(vr.Session, vr.Raw, figP50)), x(RatioOf(vr.Session, vr.Raw, figP99)), x(RatioOf(vr.Session, vr.Raw, figCPU)),
			x(RatioOf(vr.Load, vr.Raw, figRate)), x(RatioOf(vr.Load, vr.Raw, figP50)), x(RatioOf(vr.Load, vr.Raw, figP99)), x(RatioOf(vr.Load, vr.Raw, figCPU)))
	}
	fmt.Fprintln(w)
}
