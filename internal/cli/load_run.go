package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/internal/redact"
	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/loadgen"
	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/loadgen/promexport"
	"github.com/mcpspec/mcpspec/loadgen/rundir"
	"github.com/mcpspec/mcpspec/loadgen/threshold"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

func (a *app) load(ctx context.Context, cmd *cli.Command) error {
	// The secrets of the server flags are registered, so the run directory (config.json with
	// the command line, metrics.json with the spec, the reports, the trace, the server's
	// stderr) masks them.
	f := a.serverFlags(cmd)
	if vars := loadEnvOf(cmd).Vars; len(vars) > 0 {
		for _, e := range vars {
			k, v, _ := strings.Cut(e, "=")
			a.masker.AddNamed(k, v)
		}
		f.Env, f.oldEnv = append(f.Env, vars...), true
	}
	servers := cmd.StringSlice("server")
	if len(servers) > 0 {
		f.Server = servers[0]
	}
	for _, s := range servers {
		a.masker.AddURL(s)
		a.masker.AddArgs(strings.Fields(s))
	}
	if cmd.Bool("explain") {
		// The values are checked, so --explain also says whether a command line is right.
		if _, err := parseRate(cmd.String("rate")); err != nil {
			return configError(fmt.Sprintf("--rate %q: %v", cmd.String("rate"), err), "e.g. --rate 400/s")
		}
		if _, err := parseShard(cmd.String("shard")); err != nil {
			return configError(fmt.Sprintf("--shard %q: %v", cmd.String("shard"), err), "e.g. --shard 1/4")
		}
		if _, err := threshold.ParseAll(cmd.StringSlice("threshold")); err != nil {
			return configError(err.Error(), "e.g. --threshold 'p99<=500ms'")
		}
		if _, err := threshold.ParseGates(cmd.StringSlice("no-gate")); err != nil {
			return configError("--no-gate: "+err.Error(), "e.g. --no-gate leak")
		}
		return explainLoad(a.io.Stdout, cmd.String("scenario"))
	}
	colPath := cmd.String("collection")
	switch args := cmd.Args().Slice(); {
	case len(args) == 1 && colPath == "":
		colPath = args[0]
	case len(args) > 0:
		return usageError(cmd, fmt.Errorf("unexpected arguments %q (a collection goes as the only argument or with --collection)", strings.Join(args, " ")))
	}
	if err := a.checkLoadEnv(cmd, colPath); err != nil {
		return err
	}
	if len(servers) > 1 {
		for _, fl := range []string{"server-pid", "cgroup", "metrics-url"} {
			if cmd.IsSet(fl) {
				return configError(fmt.Sprintf("--%s names one server's resources, but %d servers are given", fl, len(servers)),
					"load a remote server on its own to sample it; with several --server each spawned server's own process tree is sampled")
			}
		}
		return a.loadSideBySide(ctx, cmd, f, colPath, servers)
	}
	lr, err := a.prepareLoad(ctx, cmd, f, colPath, "")
	if err != nil {
		return err
	}
	defer lr.cleanup()
	err = a.runLoad(ctx, lr)
	if lr.result != nil {
		a.keepRunDir("load", lr.cfg.ServerSpec, lr.dir, rundir.MetricsFile, loadFigures(lr.result))
	}
	return err
}

// loadRun is a load run ready to start.
type loadRun struct {
	cfg       loadgen.Config
	plan      loadPlan
	dir       string
	json      bool
	progress  string
	metrics   string
	reporters []reporterSpec
	cleanup   func()
	ths       []threshold.Threshold
	// result is the run's metrics once written (nil before, or when it could not run).
	result *metrics.Run
}

// prepareLoad resolves the command line (and a collection) into a run.
// parent, when set, is the directory the run directory goes in (instead of --out).
func (a *app) prepareLoad(ctx context.Context, cmd *cli.Command, f serverFlags, colPath, parent string) (*loadRun, error) {
	lr := &loadRun{json: f.JSON, progress: cmd.String("progress"), metrics: cmd.String("metrics-addr"), cleanup: func() {}}
	if cmd.Bool("quiet") {
		lr.progress = "off"
	}
	cfg := &lr.cfg
	cfg.Scenario = strings.ReplaceAll(cmd.String("scenario"), "-", "_")
	if cfg.Scenario == "coldStart" {
		cfg.Scenario = loadgen.ColdStart
	}
	if !containsStr(loadgen.Scenarios(), cfg.Scenario) {
		return nil, configError(fmt.Sprintf("unknown --scenario %q", cmd.String("scenario")), "use one of: "+strings.Join(loadgen.Scenarios(), ", ")+" ('mcpspec scenarios' explains them)")
	}
	switch lr.progress {
	case "auto", "tty", "plain", "off":
	default:
		return nil, configError(fmt.Sprintf("unknown --progress %q", lr.progress), "use auto, tty, plain or off")
	}
	var err error
	if cfg.Rate, err = parseRate(cmd.String("rate")); err != nil {
		return nil, configError(fmt.Sprintf("--rate %q: %v", cmd.String("rate"), err), "e.g. --rate 400/s")
	}
	if cfg.Shard, err = parseShard(cmd.String("shard")); err != nil {
		return nil, configError(fmt.Sprintf("--shard %q: %v", cmd.String("shard"), err), "e.g. --shard 1/4 (in Kubernetes: --shard $((JOB_COMPLETION_INDEX+1))/4)")
	}
	cfg.Concurrency = int(cmd.Int("concurrency"))
	cfg.Duration = cmd.Duration("duration")
	cfg.Iterations = int64(cmd.Int("iterations"))
	cfg.MaxInFlight = int(cmd.Int("max-in-flight"))
	cfg.Warmup = cmd.Duration("warmup")
	cfg.Seed = cmd.Int64("seed")
	if cfg.Concurrency < 0 || cfg.Iterations < 0 || cfg.MaxInFlight < 0 || cfg.Duration < 0 {
		return nil, configError("--concurrency, --iterations, --max-in-flight and --duration must not be negative", "")
	}
	if cmd.IsSet("rate") && cmd.IsSet("concurrency") && cfg.Scenario != loadgen.ColdStart {
		return nil, configError("give --rate (open model) or --concurrency (closed model), not both", "--rate sends on a schedule whatever the server does; --concurrency keeps N requests going")
	}
	if p := cmd.String("spike-peak"); p != "" {
		if cfg.Spike.Peak, err = parseRate(p); err != nil {
			return nil, configError(fmt.Sprintf("--spike-peak %q: %v", p, err), "e.g. --spike-peak 2000/s")
		}
	}
	cfg.Spike.At, cfg.Spike.For = cmd.Duration("spike-at"), cmd.Duration("spike-for")
	if p := cmd.String("ramp-to"); p != "" {
		if cfg.Ramp.To, err = parseRate(p); err != nil {
			return nil, configError(fmt.Sprintf("--ramp-to %q: %v", p, err), "e.g. --ramp-to 2000/s")
		}
	}
	cfg.Ramp.Steps, cfg.Ramp.MaxP99 = int(cmd.Int("ramp-steps")), cmd.Duration("ramp-max-p99")
	cfg.Soak.SnapshotInterval = cmd.Duration("snapshot-every")
	switch {
	case cmd.Bool("abandon-sessions"):
		cfg.Abandon = true
		cfg.SessionMode = loadgen.PerIteration
	case cmd.Bool("session-per-iteration"):
		cfg.SessionMode = loadgen.PerIteration
	case cmd.Int("sessions") > 1:
		cfg.SessionMode, cfg.Sessions = loadgen.Pooled, int(cmd.Int("sessions"))
	}
	if lr.ths, err = threshold.ParseAll(cmd.StringSlice("threshold")); err != nil {
		return nil, configError(err.Error(), "e.g. --threshold 'p99<=500ms' --threshold 'error_rate<1%' ('mcpspec load --explain' lists the metrics)")
	}
	if cfg.GatesOff, err = threshold.ParseGates(cmd.StringSlice("no-gate")); err != nil {
		return nil, configError("--no-gate: "+err.Error(), "e.g. --no-gate leak ('mcpspec load --help' lists the gates)")
	}
	for _, r := range cmd.StringSlice("reporter") {
		name, path, ok := strings.Cut(r, "=")
		if !ok || path == "" || !containsStr([]string{"junit", "tap", "json", "markdown", "md"}, name) {
			return nil, configError(fmt.Sprintf("--reporter %q", r), "write NAME=PATH with NAME one of junit, tap, json, markdown (the HTML and markdown reports are in the run directory)")
		}
		if name == "md" {
			name = "markdown"
		}
		lr.reporters = append(lr.reporters, reporterSpec{name: name, path: path})
	}

	// The workload and the server.
	var col *collection.Collection
	if colPath != "" {
		if col, err = a.loadLoadCollection(ctx, cmd, colPath); err != nil {
			return nil, err
		}
		if err := applyLoadBlock(cmd.IsSet, cfg, col, &lr.ths); err != nil {
			return nil, err
		}
	}
	if len(cmd.StringSlice("tool")) > 0 {
		if cfg.Workload, err = a.toolWorkload(ctx, cmd); err != nil {
			return nil, err
		}
	}
	cfg.Thresholds = lr.ths
	ro, err := resourceFlags(cmd, col)
	if err != nil {
		return nil, err
	}
	if err := ro.apply(cfg); err != nil {
		return nil, err
	}

	runID := cmd.String("run-id")
	if runID == "" {
		runID = time.Now().UTC().Format("20060102T150405Z")
		if sh := cfg.Shard; sh != nil {
			runID += fmt.Sprintf("-shard%dof%d", sh.Index, sh.Count)
		}
	}
	cfg.RunID = runID
	if parent == "" {
		parent = cmd.String("out")
	} else {
		runID = "server"
	}
	if lr.dir, err = rundir.Create(parent, runID); err != nil {
		return nil, &Error{Code: ExitRuntime, Msg: err.Error(), Hint: "choose another --out DIR", Err: err}
	}
	dir := lr.dir

	if strings.TrimSpace(f.Server) != "" || col == nil {
		t, err := a.prepare(f, "load")
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
		lr.cleanup = func() { t.finish(false) }
		cfg.Server = t.op.Options()
		cfg.ServerSpec = f.Server
	} else {
		if cfg.Server, cfg.ServerSpec, err = a.collectionServer(col, f); err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
	cfg.Server.StderrFile = runDirStderr(dir)
	if err := checkFileLimit(loadFileNeed(cfg, cfg.Server.Info.Transport), loadFileWhat(cfg, cfg.Server.Info.Transport)); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if cfg.Abandon {
		cfg.Server.Dial = keepSessions(cfg.Server.Dial)
	}
	if col != nil && cfg.Workload == nil {
		if cfg.Workload, err = a.collectionWorkload(ctx, cfg, col); err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
	if cfg.Workload == nil && cfg.Scenario != loadgen.ColdStart && !cfg.Abandon {
		_ = os.RemoveAll(dir)
		return nil, configError("nothing to call", "give --tool NAME [--args JSON] (repeatable), or --collection FILE to reuse a collection's tests")
	}
	lr.plan = loadPlan{
		Server: cfg.ServerSpec, Transport: string(cfg.Server.Info.Transport), Scenario: cfg.Scenario, Rate: cfg.Rate,
		Concurrent: cfg.Concurrency, Duration: durationText(cfg.Duration), Iterations: cfg.Iterations,
		MaxInFlight: cfg.MaxInFlight, Warmup: durationText(cfg.Warmup), Sessions: string(cfg.SessionMode),
		Workload: planWorkload(cfg.Workload), Collection: colPath, Thresholds: thresholdSpecs(lr.ths),
		Seed: cfg.Seed, Shard: cfg.Shard, Timeout: f.Timeout.String(), Argv: os.Args, Resources: ro.plan(),
	}
	if lr.plan.Sessions == "" {
		lr.plan.Sessions = string(loadgen.Shared)
	}
	if cfg.Scenario == loadgen.Spike {
		lr.plan.Spike = &cfg.Spike
	}
	if cfg.Scenario == loadgen.Ramp {
		lr.plan.Ramp = &cfg.Ramp
	}
	return lr, nil
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// runLoad runs the load, writes the run directory and reports.
func (a *app) runLoad(ctx context.Context, lr *loadRun) error {
	cfg := &lr.cfg
	tf, err := os.Create(filepath.Join(lr.dir, rundir.TraceFile))
	if err != nil {
		return &Error{Code: ExitRuntime, Msg: fmt.Sprintf("cannot write the trace: %v", err), Err: err}
	}
	defer tf.Close()
	trace := redact.NewWriter(tf, a.masker)
	defer trace.Flush()
	cfg.Trace = trace

	var live atomic.Pointer[metrics.Aggregator]
	var inFlight atomic.Int64
	cfg.OnState = func(agg *metrics.Aggregator) { live.Store(agg) }
	if lr.metrics != "" {
		stop, _, err := serveMetrics(lr.metrics, promexport.NewCollector(live.Load, inFlight.Load), a.io.Stderr)
		if err != nil {
			return err
		}
		defer stop()
	}
	disp := a.newProgress(lr.progress, cfg)
	cfg.OnProgress = func(p loadgen.Progress) {
		inFlight.Store(p.InFlight)
		disp.update(p)
	}
	res, err := loadgen.Run(ctx, cfg)
	disp.stop()
	if err != nil {
		return a.loadError(ctx, lr, err)
	}
	run := res.Run
	if err := rundir.Write(lr.dir, run, &rundir.Options{Config: lr.plan, Masker: a.masker}); err != nil {
		return &Error{Code: ExitRuntime, Msg: err.Error(), Err: err}
	}
	lr.result = run
	if err := a.writeLoadReports(lr, run); err != nil {
		return err
	}
	if lr.json {
		if err := writeJSON(a.io.Stdout, run); err != nil {
			return err
		}
	} else {
		printLoadSummary(a.io.Stdout, run, lr.dir)
	}
	if run.Interrupted {
		return &Error{Code: ExitInterrupted, Msg: "interrupted: the run directory holds what was measured until then", Hint: "see " + lr.dir, Quiet: lr.json}
	}
	if !run.Passed {
		return &Error{Code: ExitFailure, Msg: failedRunText(run), Hint: "see " + filepath.Join(lr.dir, rundir.HTMLFile)}
	}
	return nil
}

// failedRunText names what failed a run: its violated thresholds and failed gates.
func failedRunText(run *metrics.Run) string {
	var parts []string
	if n := len(run.ThresholdViolations); n > 0 {
		names := make([]string, n)
		for i, v := range run.ThresholdViolations {
			names[i] = fmt.Sprintf("%s (%s, got %s)", v.Metric, v.Expected, v.Actual)
		}
		parts = append(parts, fmt.Sprintf("%d of %d thresholds violated: %s", n, len(run.Thresholds), strings.Join(names, "; ")))
	}
	if gs := threshold.FailedGates(run); len(gs) > 0 {
		names := make([]string, len(gs))
		for i, g := range gs {
			names[i] = fmt.Sprintf("gate %s (%s)", g.Name, g.Detail)
		}
		parts = append(parts, strings.Join(names, "; ")+" — turn a gate off with --no-gate NAME, or set a threshold on its metric")
	}
	return strings.Join(parts, "; ")
}

// loadError describes a run that could not start.
func (a *app) loadError(ctx context.Context, lr *loadRun, err error) error {
	keep := serverconn.FileSize(filepath.Join(lr.dir, "server.stderr.log")) > 0
	if !keep {
		_ = os.RemoveAll(lr.dir)
	} else {
		_ = rundir.MaskStderr(lr.dir, a.masker)
	}
	if errors.Is(err, loadgen.ErrConfig) {
		return configError(strings.TrimPrefix(err.Error(), loadgen.ErrConfig.Error()+": "), "check the load flags ('mcpspec load --explain')")
	}
	var se *serverconn.Error
	if errors.As(err, &se) {
		e := fromServerconn(err)
		if e.Code != ExitInterrupted && ctx.Err() == nil {
			e.Code = ExitConnection
		}
		return e
	}
	return &Error{Code: ExitRuntime, Msg: err.Error(), Err: err}
}

// metricsListenAddr is where --metrics-addr addr listens: an address without a host (":9464")
// is loopback only (127.0.0.1:9464). exposed names what else it binds ("" for loopback): every
// interface for 0.0.0.0, [::] or an empty IPv6 host, or the host as given.
func metricsListenAddr(addr string) (listen, exposed string, err error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", "", err
	}
	switch {
	case host == "":
		return net.JoinHostPort("127.0.0.1", port), "", nil
	case host == "localhost":
		return addr, "", nil
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return addr, host, nil
	case ip.IsLoopback():
		return addr, "", nil
	case ip.IsUnspecified():
		return addr, "every network interface", nil
	}
	return addr, host, nil
}

// serveMetrics serves Prometheus metrics on addr (loopback unless the user names another
// host, and then it says so on warn) until the returned stop is called; bound is the address
// it listens on.
func serveMetrics(addr string, c *promexport.Collector, warn io.Writer) (stop func(), bound net.Addr, err error) {
	listen, exposed, err := metricsListenAddr(addr)
	if err != nil {
		return nil, nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--metrics-addr %s: %v", addr, err), Hint: "e.g. --metrics-addr 127.0.0.1:9464", Err: err}
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, nil, &Error{Code: ExitConfig, Msg: fmt.Sprintf("--metrics-addr %s: %v", addr, err), Hint: "e.g. --metrics-addr 127.0.0.1:9464", Err: err}
	}
	if exposed != "" {
		fmt.Fprintf(warn, "Note: --metrics-addr %s serves the live metrics beyond this machine (%s), without authentication\n", ln.Addr(), exposed)
	}
	srv := &http.Server{Handler: promexport.Handler(c), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}, ln.Addr(), nil
}

// printLoadSummary prints the run's verdict and main numbers.
func printLoadSummary(w io.Writer, run *metrics.Run, dir string) {
	verdict := "PASS"
	switch {
	case run.Interrupted:
		verdict = "INTERRUPTED"
	case !run.Passed:
		verdict = "FAIL"
	}
	sc := run.Scenario
	model := "closed model, " + textfmt.Plural(sc.Concurrent, "worker")
	if sc.Model == "open" {
		model = fmt.Sprintf("open model, %g/s", sc.Rate)
	}
	fmt.Fprintf(w, "%s  %s, %s, %.1fs — %s\n", verdict, sc.Kind, model, run.DurationSecs, dir)
	t := run.Throughput
	// A cold start's requests are its phases (connect, handshake, first call, total): their
	// latencies only mean something apart, in the table below.
	coldStart := sc.Kind == loadgen.ColdStart
	if coldStart {
		fmt.Fprintf(w, "  %s", textfmt.Plural(int(t.Iterations), "cold start"))
	} else {
		fmt.Fprintf(w, "  requests %d, %.1f/s", t.TotalRequests, t.RequestsPerSec)
	}
	if t.OfferedRate > 0 {
		fmt.Fprintf(w, " of %.1f/s offered", t.OfferedRate)
	}
	fmt.Fprintf(w, " · errors %d (%.2f%%)", run.Errors.Total, run.Errors.Rate*100)
	if run.Errors.AssertionFailures > 0 {
		fmt.Fprintf(w, " · assertion failures %d", run.Errors.AssertionFailures)
	}
	fmt.Fprintln(w)
	if l := run.Latency; !coldStart {
		fmt.Fprintf(w, "  latency p50 %s · p90 %s · p99 %s · p99.9 %s · max %s\n", msText(l.P50), msText(l.P90), msText(l.P99), msText(l.P999), msText(l.Max))
	}
	rows := [][]string{}
	for _, op := range run.PerOp {
		rows = append(rows, []string{"  " + op.Name, string(op.Kind), fmt.Sprintf("%d req", op.Requests), "p50 " + msText(op.Latency.P50), "p99 " + msText(op.Latency.P99), fmt.Sprintf("%d errors", op.Errors)})
	}
	if len(rows) > 1 || (len(rows) == 1 && run.PerOp[0].Kind != metrics.KindTool) {
		_ = table(w, rows)
	}
	for _, c := range sortedCategoryCounts(run.Errors.ByCategory) {
		fmt.Fprintf(w, "  %s: %d\n", c.k, c.v)
	}
	if p := run.Process; p != nil && len(p.Samples) > 0 {
		fmt.Fprintf(w, "  server RSS %.1f → %.1f MB (peak %.1f), CPU %.0f%% on average", p.Samples[0].RSSMB, p.FinalRSSMB, p.PeakRSSMB, p.AvgCPUPct)
		if s := run.Sampling; s != nil && s.Source != "" {
			fmt.Fprintf(w, " · %s", s.Source)
		}
		fmt.Fprintln(w)
	}
	for _, th := range run.Thresholds {
		mark := "✓"
		switch {
		case th.Indeterminate:
			mark = "?"
		case !th.Passed:
			mark = "✗"
		}
		name := th.Metric
		if th.Scope != "" {
			name += ":" + th.Scope
		}
		fmt.Fprintf(w, "  %s %s%s (got %s)\n", mark, name, th.Expected, th.Actual)
	}
	for _, g := range run.Gates {
		switch {
		case !g.Passed:
			fmt.Fprintf(w, "  ✗ gate %s: %s\n", g.Name, g.Detail)
		case g.Count > 0 && g.Off:
			fmt.Fprintf(w, "  · gate %s off: %s\n", g.Name, g.Detail)
		case g.Count > 0 && g.OverriddenBy != "":
			fmt.Fprintf(w, "  · gate %s judged by threshold %s: %s\n", g.Name, g.OverriddenBy, g.Detail)
		}
	}
	if c := run.Crashes; c.Count > 0 {
		fmt.Fprintf(w, "  crashes %d: %.2f%% of the %d requests the server took up · %d more lost to the crashes and restarts\n",
			c.Count, c.Rate*100, c.LiveRequests, c.LostToRestarts)
	}
	slow := run.Analysis.SlowStart
	if slow != nil {
		fmt.Fprintf(w, "  ⚠ %s\n", slow.Detail)
	}
	for _, n := range run.Analysis.Notes[min(1, len(run.Analysis.Notes)):] {
		if slow != nil && n == slow.Detail {
			continue
		}
		fmt.Fprintf(w, "  · %s\n", n)
	}
	fmt.Fprintf(w, "  report: %s\n", filepath.Join(dir, rundir.HTMLFile))
}

type catCount struct {
	k result.Category
	v int64
}

func sortedCategoryCounts(m map[result.Category]int64) []catCount {
	var out []catCount
	for _, c := range result.Categories() {
		if m[c] > 0 {
			out = append(out, catCount{c, m[c]})
		}
	}
	if n := m[metrics.ToolErrorCategory]; n > 0 {
		out = append(out, catCount{metrics.ToolErrorCategory, n})
	}
	return out
}

func msText(v float64) string {
	switch {
	case v >= 1000:
		return fmt.Sprintf("%.2fs", v/1000)
	case v >= 10:
		return fmt.Sprintf("%.0fms", v)
	}
	return fmt.Sprintf("%.2fms", v)
}

var _ = json.Valid
