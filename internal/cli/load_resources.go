package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/loadgen"
	"github.com/mcpspec/mcpspec/loadgen/leak"
	"github.com/mcpspec/mcpspec/loadgen/resources"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

// minSampleInterval is the shortest --sample-interval: a process tree's reading takes a few
// milliseconds of the machine the load runs on.
const minSampleInterval = 10 * time.Millisecond

// resourceFlagDefs are the flags of server resource sampling and leak analysis.
func resourceFlagDefs() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "server-pid", DefaultText: "a stdio server's own process tree", Usage: "sample process `PID` and its descendants (a local server mcpspec did not start)"},
		&cli.StringFlag{Name: "cgroup", Usage: "sample the cgroup v2 directory `DIR` (a server in a container or a systemd unit), e.g. /sys/fs/cgroup/system.slice/mcp.service"},
		&cli.StringFlag{Name: "metrics-url", Usage: "sample the Prometheus endpoint `URL` (process_resident_memory_bytes, process_cpu_seconds_total, process_open_fds)"},
		&durationFlag{Name: "sample-interval", DefaultText: "1s", Usage: "read the server's resources every `D`"},
		&cli.IntFlag{Name: "leak-min-calls", Value: leak.DefaultMinCalls, Usage: "leak analysis: calls after the warm-up a leak verdict needs (`N`; 0: no minimum); with fewer, steady growth below 32 KiB per call is \"indeterminate\": a healthy heap grows over its first thousands of calls"},
	}
}

// resourceOptions say how a load run samples its server's resources and judges leaks.
type resourceOptions struct {
	pid        int
	cgroup     string
	metricsURL string
	interval   time.Duration
	// minCalls is leak.Options.MinCalls (0: the default; negative: none).
	minCalls int64
	// cli says the options were read for the command line (else for `mcpspec test`);
	// fromBlock holds the settings a collection's load.resources block gave, byFlag those the
	// command line did (it wins).
	cli               bool
	fromBlock, byFlag map[string]bool
}

// resourceNames are the command-line flag and the load.resources key of each setting.
var resourceNames = map[string][2]string{
	"pid": {"--server-pid", "load.resources.serverPid"}, "cgroup": {"--cgroup", "load.resources.cgroup"},
	"metricsURL": {"--metrics-url", "load.resources.metricsUrl"}, "interval": {"--sample-interval", "load.resources.sampleInterval"},
	"minCalls": {"--leak-min-calls", "load.resources.leakMinCalls"},
}

// name is how errors name setting k: its key in the collection when the block set it, else
// its flag on the command line.
func (o resourceOptions) name(k string) string {
	if o.fromBlock[k] && !o.byFlag[k] || !o.cli {
		return resourceNames[k][1]
	}
	return resourceNames[k][0]
}

// resourceFlags reads the flags over a collection's load.resources block (col may be nil):
// a flag wins over the block's key, and a source on the command line (--server-pid, --cgroup,
// --metrics-url) replaces the block's.
func resourceFlags(cmd *cli.Command, col *collection.Collection) (resourceOptions, error) {
	o, err := blockResources(col)
	if err != nil {
		return o, err
	}
	o.cli = true
	if cmd.IsSet("server-pid") || cmd.IsSet("cgroup") || cmd.IsSet("metrics-url") {
		o.pid, o.cgroup, o.metricsURL = int(cmd.Int("server-pid")), cmd.String("cgroup"), cmd.String("metrics-url")
		o.byFlag["pid"], o.byFlag["cgroup"], o.byFlag["metricsURL"] = true, true, true
		if cmd.IsSet("server-pid") && o.pid <= 0 {
			return o, configError(fmt.Sprintf("--server-pid %d is not a process id", o.pid), "give the pid of the server's process, e.g. --server-pid $(pgrep -f my-server)")
		}
	}
	if cmd.IsSet("sample-interval") {
		o.interval, o.byFlag["interval"] = cmd.Duration("sample-interval"), true
	}
	if cmd.IsSet("leak-min-calls") {
		n := cmd.Int("leak-min-calls")
		if n < 0 {
			return o, configError(fmt.Sprintf("--leak-min-calls %d is negative", n), "give 0 for no minimum, or a number of calls (default "+strconv.Itoa(leak.DefaultMinCalls)+")")
		}
		o.minCalls, o.byFlag["minCalls"] = minCallsOption(int64(n)), true
	}
	return o, nil
}

// blockResources reads a collection's load.resources block (none: the defaults).
func blockResources(col *collection.Collection) (resourceOptions, error) {
	o := resourceOptions{byFlag: map[string]bool{}, fromBlock: map[string]bool{}}
	if col == nil || col.Load == nil || col.Load.Resources == nil {
		return o, nil
	}
	r := col.Load.Resources
	o.fromBlock = map[string]bool{"pid": r.ServerPID != 0, "cgroup": r.Cgroup != "", "metricsURL": r.MetricsURL != "",
		"interval": r.SampleInterval != 0, "minCalls": r.LeakMinCalls != nil}
	vars := col.Vars()
	var err error
	if o.cgroup, err = vars.ExpandString(r.Cgroup); err != nil {
		return o, configError(fmt.Sprintf("%s: load.resources.cgroup: %v", col.File, err), "define the variable with --var, --env-file or the collection's variables")
	}
	if o.metricsURL, err = vars.ExpandString(r.MetricsURL); err != nil {
		return o, configError(fmt.Sprintf("%s: load.resources.metricsUrl: %v", col.File, err), "define the variable with --var, --env-file or the collection's variables")
	}
	o.pid, o.interval = r.ServerPID, r.SampleInterval
	if r.LeakMinCalls != nil {
		o.minCalls = minCallsOption(*r.LeakMinCalls)
	}
	return o, nil
}

// minCallsOption turns a user's minimum of calls (0: none) into leak.Options.MinCalls.
func minCallsOption(n int64) int64 {
	if n == 0 {
		return -1
	}
	return n
}

// apply checks the options and sets cfg's sampler, interval and leak analyzer. A source that
// cannot be sampled (no such process, not a cgroup v2 directory, not an http URL) is a
// configuration error; a remote server with no source is sampled not at all, and the run says
// why.
func (o resourceOptions) apply(cfg *loadgen.Config) error {
	var given []string
	for _, k := range []string{"pid", "cgroup", "metricsURL"} {
		if (k == "pid" && o.pid != 0) || (k == "cgroup" && o.cgroup != "") || (k == "metricsURL" && o.metricsURL != "") {
			given = append(given, o.name(k))
		}
	}
	if len(given) > 1 {
		return configError(fmt.Sprintf("%s and %s name two sources of the server's resources", given[0], given[1]),
			"give one: "+o.name("pid")+" for a local process, "+o.name("cgroup")+" for a container or systemd unit, "+o.name("metricsURL")+" for a Prometheus /metrics endpoint")
	}
	if o.interval != 0 && o.interval < minSampleInterval {
		return configError(fmt.Sprintf("%s %v is too short", o.name("interval"), o.interval), fmt.Sprintf("sample every %v or more slowly, e.g. %s 250ms", minSampleInterval, o.name("interval")))
	}
	var src resources.Sampler
	switch {
	case o.pid != 0:
		t, err := resources.ProcessTree(o.pid)
		if err != nil {
			return configError(fmt.Sprintf("%s %d: no such process", o.name("pid"), o.pid), "give the pid of a running server, e.g. $(pgrep -f my-server)")
		}
		src = t
	case o.cgroup != "":
		c, err := resources.Cgroup(o.cgroup)
		if err != nil {
			cause := err
			if u := errors.Unwrap(err); u != nil {
				cause = u
			}
			return configError(fmt.Sprintf("%s %s: not a cgroup v2 directory (%v)", o.name("cgroup"), o.cgroup, cause), "give a cgroup v2 directory, e.g. /sys/fs/cgroup/system.slice/mcp.service (systemctl status shows a unit's CGroup; docker's is under /sys/fs/cgroup/system.slice/docker-ID.scope)")
		}
		src = c
	case o.metricsURL != "":
		m, err := resources.Prometheus(o.metricsURL, nil)
		if err != nil {
			return configError(fmt.Sprintf("%s %q: want an http(s) URL", o.name("metricsURL"), o.metricsURL), "e.g. "+o.name("metricsURL")+" http://127.0.0.1:9464/metrics")
		}
		src = m
	}
	cfg.SampleInterval = o.interval
	cfg.LeakAnalyzer = loadgen.LeakAnalysis(&leak.Options{MinCalls: o.minCalls, LoadWarmup: cfg.Warmup})
	if src != nil {
		s := loadgen.ResourceSampler(src)
		cfg.Sampler = func(context.Context, *serverconn.Conn) (loadgen.Sampler, error) { return s, nil }
		return nil
	}
	hintText := fmt.Sprintf("give %s, %s or %s", o.name("pid"), o.name("cgroup"), o.name("metricsURL"))
	cfg.Sampler = func(_ context.Context, first *serverconn.Conn) (loadgen.Sampler, error) {
		switch {
		case first == nil:
			return nil, fmt.Errorf("a cold start opens a new server for every session, none lasts to be sampled (a remote server: %s)", hintText)
		case first.Process == nil:
			return nil, fmt.Errorf("the server is reached over %s, not started by mcpspec: %s to sample it", first.Transport, hintText)
		}
		t, err := resources.ProcessTree(first.Process.PID())
		if err != nil {
			return nil, fmt.Errorf("the server's process: %w", err)
		}
		return loadgen.ResourceSampler(t), nil
	}
	return nil
}

// plan describes the options for config.json.
func (o resourceOptions) plan() planResources {
	p := planResources{Source: "process_tree", ServerPID: o.pid, Cgroup: o.cgroup, MetricsURL: o.metricsURL,
		Interval: o.interval.String(), LeakMinCalls: o.minCalls}
	switch {
	case o.pid != 0:
		p.Source = "server_pid"
	case o.cgroup != "":
		p.Source = "cgroup"
	case o.metricsURL != "":
		p.Source = "metrics_url"
	}
	if o.interval == 0 {
		p.Interval = time.Second.String()
	}
	switch {
	case o.minCalls == 0:
		p.LeakMinCalls = leak.DefaultMinCalls
	case o.minCalls < 0:
		p.LeakMinCalls = 0
	}
	return p
}
