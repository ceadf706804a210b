package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/loadgen"
	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/loadgen/threshold"
	"github.com/mcpspec/mcpspec/runner"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/spec"
	"github.com/mcpspec/mcpspec/session/transport/streamable"
)

// loadLoadCollection loads the collection a load run uses.
func (a *app) loadLoadCollection(ctx context.Context, cmd *cli.Command, path string) (*collection.Collection, error) {
	vars, envFile, err := varFlags(ctx, cmd)
	if err != nil {
		return nil, err
	}
	env, err := loadEnvironment(cmd)
	if err != nil {
		return nil, err
	}
	lo := &collection.LoadOptions{LookupEnv: os.LookupEnv, Vars: vars, EnvFile: envFile, Environment: env, Masker: a.masker}
	cols, err := loadCollections([]string{path}, lo, "load")
	if err != nil {
		return nil, err
	}
	if len(cols) != 1 {
		return nil, configError(fmt.Sprintf("%s holds %d collections; a load run takes one", path, len(cols)), "pass one collection file")
	}
	return cols[0], nil
}

// applyLoadBlock takes the collection's load: block as defaults; flags given explicitly win.
func applyLoadBlock(set func(flag string) bool, cfg *loadgen.Config, col *collection.Collection, ths *[]threshold.Threshold) error {
	l := col.Load
	if l == nil {
		return nil
	}
	if !set("scenario") {
		cfg.Scenario = l.Scenario
		if cfg.Scenario == "coldStart" {
			cfg.Scenario = loadgen.ColdStart
		}
	}
	if !set("duration") && l.Duration > 0 {
		cfg.Duration = l.Duration
	}
	if !set("rate") && !set("concurrency") {
		if l.Rate > 0 {
			cfg.Rate = l.Rate
			if l.Concurrent > 0 {
				cfg.MaxInFlight = l.Concurrent
			}
		} else if l.Concurrent > 0 {
			cfg.Concurrency = l.Concurrent
		}
	}
	if !set("max-in-flight") && l.MaxInFlight > 0 {
		cfg.MaxInFlight = l.MaxInFlight
	}
	if !set("sessions") && !set("session-per-iteration") && l.Sessions > 1 {
		cfg.SessionMode, cfg.Sessions = loadgen.Pooled, l.Sessions
	}
	if !set("warmup") && l.Warmup > 0 {
		cfg.Warmup = l.Warmup
	}
	if !set("iterations") && l.Iterations > 0 {
		cfg.Iterations = int64(l.Iterations)
	}
	if r := l.Ramp; r != nil && cfg.Scenario == loadgen.Ramp {
		if !set("concurrency") && !set("rate") && r.From > 0 {
			cfg.Concurrency, cfg.Rate = r.From, 0
		}
		if !set("ramp-to") && r.To > 0 {
			cfg.Ramp.To = float64(r.To)
		}
		if !set("duration") && r.Duration > 0 {
			cfg.Duration = r.Duration
		}
	}
	if s := l.Spike; s != nil && cfg.Scenario == loadgen.Spike {
		if !set("concurrency") && !set("rate") && s.BaselineConcurrent > 0 {
			cfg.Concurrency, cfg.Rate = s.BaselineConcurrent, 0
		}
		if !set("spike-peak") && s.SpikeConcurrent > 0 {
			cfg.Spike.Peak = float64(s.SpikeConcurrent)
		}
		if !set("spike-at") && s.SpikeAt > 0 {
			cfg.Spike.At = s.SpikeAt
		}
		if !set("spike-for") && s.SpikeDuration > 0 {
			cfg.Spike.For = s.SpikeDuration
		}
		if !set("duration") && cfg.Duration == 0 && s.BaselineDuration > 0 {
			cfg.Duration = s.BaselineDuration + s.SpikeDuration + s.BaselineDuration
		}
	}
	if s := l.Soak; s != nil {
		if !set("snapshot-every") && s.SampleInterval > 0 {
			cfg.Soak.SnapshotInterval = s.SampleInterval
		}
		cfg.Soak.MaxDriftMsPerSec = s.LatencyDriftMsPerSec
	}
	if t := l.Thresholds; t != nil {
		*ths = append(*ths, blockThresholds(t, "")...)
		if t.MinRPS > 0 {
			*ths = append(*ths, threshold.Threshold{Metric: "rps", Op: threshold.GE, Limit: t.MinRPS})
		}
		for _, name := range sortedKeys(t.Tools) {
			*ths = append(*ths, blockThresholds(t.Tools[name], name)...)
		}
	}
	if len(l.NoGate) > 0 {
		off, err := threshold.ParseGates(l.NoGate)
		if err != nil {
			return configError(fmt.Sprintf("%s: load.noGate: %v", l.Pos, err), "the gates: crash, hang, malformed, assertions, leak or all")
		}
		// --no-gate adds to the block's: both turn gates off.
		cfg.GatesOff = mergeGates(cfg.GatesOff, off)
	}
	return nil
}

// mergeGates is the sorted union of two gate lists.
func mergeGates(a, b []threshold.Gate) []threshold.Gate {
	out := append(append([]threshold.Gate(nil), a...), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// blockThresholds turns a load block's thresholds into the engine's, for the run or one tool.
func blockThresholds(t *collection.Thresholds, scope string) []threshold.Threshold {
	var out []threshold.Threshold
	add := func(metric string, limit float64) {
		out = append(out, threshold.Threshold{Metric: metric, Scope: scope, Op: threshold.LE, Limit: limit})
	}
	for _, p := range []struct {
		m string
		d time.Duration
	}{{"p50", t.P50}, {"p95", t.P95}, {"p99", t.P99}, {"p999", t.P999}} {
		if p.d > 0 {
			add(p.m, float64(p.d)/float64(time.Millisecond))
		}
	}
	if t.ErrorRate > 0 {
		add("error_rate", t.ErrorRate)
	}
	if scope != "" {
		return out
	}
	for _, m := range []struct {
		name  string
		limit float64
	}{{"memory_growth_mb", t.MemoryGrowthMB}, {"leak_kb_per_call", t.LeakKBPerCall}, {"leak_slope_mb_per_sec", t.LeakSlopeMBPerSec}} {
		if m.limit > 0 {
			add(m.name, m.limit)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// collectionServer reaches the collection's default server the way its tests do.
func (a *app) collectionServer(col *collection.Collection, f serverFlags) (serverconn.Options, string, error) {
	def := col.Servers[col.DefaultServer]
	if def == nil {
		return serverconn.Options{}, "", configError(fmt.Sprintf("%s names no default server", col.File), "give --server SPEC, or a top-level server: in the collection")
	}
	srv, err := runner.ExpandServer(def, col.Vars())
	if err != nil {
		return serverconn.Options{}, "", configError(err.Error(), "define the variable with --var, --env-file or the collection's variables")
	}
	target, so := runner.ServerSpec(srv)
	info, err := spec.Resolve(target, so)
	if err != nil {
		return serverconn.Options{}, "", specError(err)
	}
	baseDir := filepath.Dir(col.File)
	timeout := srv.Timeouts.Call
	if timeout == 0 {
		timeout = f.Timeout
	}
	connect := srv.Timeouts.Connect
	if connect == 0 {
		connect = f.ConnectTimeout
	}
	hang := f.HangThreshold
	if l := col.Load; hang == 0 && l != nil && l.Thresholds != nil {
		hang = l.Thresholds.HangTimeout
	}
	return serverconn.Options{
		Name: srv.Name,
		Info: info,
		Dial: func(stderrPath string) (transport.Dialer, error) {
			d, _, err := runner.DialServer(srv, &runner.DialOptions{Executable: a.io.Executable, StderrPath: stderrPath, BaseDir: baseDir})
			return d, err
		},
		Session: session.Options{
			ClientInfo:      session.Implementation{Name: "mcpspec", Version: buildVersion()},
			RequestTimeout:  timeout,
			ConnectTimeout:  connect,
			ProtocolVersion: srv.ProtocolVersion,
			HangThreshold:   hang,
		},
		Terms: serverconn.CollectionTerms(),
	}, target, nil
}

// collectionWorkload turns the collection's tests into the workload: the load block's toolCalls
// or mix, or every test, each with its assertions checked under load.
func (a *app) collectionWorkload(ctx context.Context, cfg *loadgen.Config, col *collection.Collection) (*loadgen.Workload, error) {
	wl := &loadgen.Workload{}
	if l := col.Load; l != nil && len(l.Patterns) > 0 {
		for _, p := range l.Patterns {
			e := loadgen.Entry{Name: p.Name, Weight: p.Weight}
			for _, st := range p.Steps {
				args, err := json.Marshal(st.Input)
				if err != nil {
					return nil, configError(fmt.Sprintf("%s: load.patterns %s: %v", col.File, st.Tool, err), "")
				}
				step := loadgen.ToolCall(st.Tool, args, 1).Steps[0]
				step.Think, step.OnError = p.ThinkTime, loadgen.OnError(st.OnError)
				e.Steps = append(e.Steps, step)
			}
			wl.Entries = append(wl.Entries, e)
		}
		return wl, nil
	}
	if l := col.Load; l != nil && len(l.ToolCalls) > 0 {
		for _, c := range l.ToolCalls {
			args, err := json.Marshal(c.Input)
			if err != nil {
				return nil, configError(fmt.Sprintf("%s: load.toolCalls %s: %v", col.File, c.Tool, err), "")
			}
			wl.Entries = append(wl.Entries, loadgen.ToolCall(c.Tool, args, c.Weight))
		}
		return wl, nil
	}
	schemas := a.outputSchemas(ctx, cfg.Server)
	vars := col.Vars()
	timeout := cfg.Server.Session.RequestTimeout
	add := func(t *collection.Test, weight float64) {
		name := t.Name
		if name == "" {
			name = t.ID
		}
		step := runner.LoadStep(t, vars, timeout, func(tool string) json.RawMessage { return schemas[tool] })
		wl.Entries = append(wl.Entries, loadgen.Entry{Weight: weight, Steps: []loadgen.Step{{
			Name: name, Kind: metrics.KindTest,
			Do: func(ctx context.Context, s *session.Session) loadgen.Outcome {
				o := step(ctx, s)
				return loadgen.Outcome{Err: o.Err, ToolError: o.ToolError, Failed: o.Failed, Msg: o.Msg}
			},
		}}})
	}
	if l := col.Load; l != nil && len(l.Mix) > 0 {
		for _, m := range l.Mix {
			t := col.Test(m.Test)
			if t == nil {
				return nil, configError(fmt.Sprintf("%s: load.mix names test %q, which the collection does not have", col.File, m.Test), "use the id: of a test")
			}
			add(t, m.Weight)
		}
		return wl, nil
	}
	for _, t := range col.Tests {
		if t.Server != "" && t.Server != col.DefaultServer {
			continue
		}
		add(t, 1)
	}
	if len(wl.Entries) == 0 {
		return nil, configError(fmt.Sprintf("%s has no test for its default server", col.File), "add tests, or a load: block with toolCalls")
	}
	return wl, nil
}

// outputSchemas lists the server's tools once, for schema assertions under load.
func (a *app) outputSchemas(ctx context.Context, o serverconn.Options) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	o.StderrFile = nil
	c, err := serverconn.New(o).Open(ctx)
	if err != nil {
		return out
	}
	defer c.Close()
	tools, err := c.ListTools(ctx)
	if err != nil {
		return out
	}
	for _, t := range tools {
		if len(t.OutputSchema) > 0 {
			out[t.Name] = t.OutputSchema
		}
	}
	return out
}

// keepSessions makes Streamable HTTP dialers leave their server sessions open on Close (no
// DELETE): the abandoned-session mode.
func keepSessions(dial serverconn.DialFunc) serverconn.DialFunc {
	return func(stderrPath string) (transport.Dialer, error) {
		d, err := dial(stderrPath)
		if err != nil {
			return nil, err
		}
		switch x := d.(type) {
		case streamable.Dialer:
			x.KeepSession = true
			return x, nil
		case streamable.Auto:
			x.Dialer.KeepSession = true
			return x, nil
		}
		return d, nil
	}
}

var _ = strings.Cut
