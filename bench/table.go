//go:build unix

package bench

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"
)

// µs formats a duration in microseconds.
func µs(d time.Duration) string { return fmt.Sprintf("%.1f µs", float64(d)/1e3) }

// perCall divides d by n calls.
func perCall(d time.Duration, n int) time.Duration {
	if n == 0 {
		return 0
	}
	return d / time.Duration(n)
}

// ratio formats a/b.
func ratio(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

// row is one line of a markdown table.
func row(w io.Writer, cells ...string) { fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | ")) }

func header(w io.Writer, cells ...string) {
	row(w, cells...)
	seps := make([]string, len(cells))
	for i := range seps {
		seps[i] = "---"
	}
	row(w, seps...)
}

// WriteTables prints r as markdown tables.
func (r *Results) WriteTables(w io.Writer) {
	c := r.Config
	fmt.Fprintf(w, "mcpbench: %s/%s, %d CPUs (GOMAXPROCS %d), %s; each run ≤ %d calls and ≤ %v; %d concurrent callers\n\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), c.N, c.Duration, c.Concurrency)

	if len(r.InMemory) > 0 {
		fmt.Fprintln(w, "### Client CPU per tools/call over an in-memory pipe (net.Pipe, JSON lines, fake server in process)")
		fmt.Fprintln(w)
		header(w, "callers", "mcpspec client", "go-sdk client", "go-sdk / mcpspec", "mcpspec process", "go-sdk process", "fake server")
		for i, label := range []string{"1", fmt.Sprint(c.Concurrency)} {
			o, g := r.InMemory[Ours][i], r.InMemory[GoSDK][i]
			row(w, label, µs(o.ClientCPUPerCall()), µs(g.ClientCPUPerCall()),
				ratio(float64(g.ClientCPUPerCall()), float64(o.ClientCPUPerCall())),
				µs(perCall(o.CPU, o.Calls)), µs(perCall(g.CPU, g.Calls)), µs(perCall(o.ServerCPU, o.Calls)))
		}
		fmt.Fprintln(w)
	}

	for _, tr := range []Transport{Stdio, HTTP} {
		k, ok := r.Wire[tr]
		if !ok {
			continue
		}
		fmt.Fprintf(w, "### %s: against a raw client (server: `mcpspec testserver` child process; client process measured)\n\n", tr)
		header(w, "metric", "raw", "mcpspec", "go-sdk", "mcpspec / raw", "go-sdk / raw", "go-sdk / mcpspec")
		for i, callers := range []string{"1 caller", fmt.Sprintf("%d callers", c.Concurrency)} {
			metric := func(name string, f func(Sample) float64, format func(float64) string) {
				raw, o, g := f(k[Raw][i]), f(k[Ours][i]), f(k[GoSDK][i])
				row(w, name+", "+callers, format(raw), format(o), format(g), ratio(o, raw), ratio(g, raw), ratio(g, o))
			}
			metric("calls/s", Sample.PerSecond, func(v float64) string { return fmt.Sprintf("%.0f", v) })
			metric("client CPU/call", func(s Sample) float64 { return float64(s.ClientCPUPerCall()) },
				func(v float64) string { return µs(time.Duration(v)) })
			metric("allocs/call", Sample.AllocsPerCall, func(v float64) string { return fmt.Sprintf("%.1f", v) })
		}
		fmt.Fprintln(w)
	}

	for _, tr := range []Transport{Stdio, HTTP, H2C} {
		k, ok := r.Inflight[tr]
		if !ok {
			continue
		}
		n := k[Ours].Calls
		how := "one session, one pipe to a child `mcpspec testserver --transport stdio`"
		switch tr {
		case HTTP:
			how = fmt.Sprintf("one session, %d HTTP/1.1 connections to a child `mcpspec testserver --transport http`, fd limit %d", k[Ours].Connections, r.FileLimit)
		case H2C:
			how = fmt.Sprintf("one session, HTTP/2 without TLS to a child `mcpspec testserver --transport http`: the calls are streams on %d connections", k[Ours].Connections)
		}
		fmt.Fprintf(w, "### Memory per in-flight call, %s × %d (%s; client process after GC, while all are pending, minus before)\n\n", tr, n, how)
		header(w, "per in-flight call", "raw", "mcpspec", "go-sdk", "mcpspec / raw", "go-sdk / mcpspec")
		kb := func(v float64) string { return fmt.Sprintf("%.1f KB", v/1024) }
		for _, m := range []struct {
			name   string
			f      func(InflightSample) float64
			format func(float64) string
		}{
			{"**HeapInuse + StackInuse**", InflightSample.PerCall, kb},
			{"HeapAlloc + StackInuse", InflightSample.LivePerCall, kb},
			{"HeapInuse", InflightSample.HeapPerCall, kb},
			{"StackInuse", InflightSample.StackPerCall, kb},
			{"goroutines", InflightSample.GoroutinesPerCall, func(v float64) string { return fmt.Sprintf("%.2f", v) }},
		} {
			raw, o, g := m.f(k[Raw]), m.f(k[Ours]), m.f(k[GoSDK])
			row(w, m.name, m.format(raw), m.format(o), m.format(g), ratio(o, raw), ratio(g, o))
		}
		fmt.Fprintln(w)
	}
}
