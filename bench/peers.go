//go:build unix

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// EchoPackage is the import path of the bench's echo server command, built by [BuildEcho].
const EchoPackage = "github.com/mcpspec/mcpspec/bench/cmd/echoserver"

// BuildEcho compiles the echo server ([ServeEcho]) into dir and returns the binary's path. Like
// [Build], it runs the go tool inside this module.
func BuildEcho(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "echoserver")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, EchoPackage)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("bench: build %s: %w\n%s", EchoPackage, err, out)
	}
	return bin, nil
}

// MCPStressPath is where `npm ci` in interop/ puts the mcp-stress binary
// (@mcp-stress/linux-x64@0.2.1), relative to the module root.
const MCPStressPath = "interop/node_modules/@mcp-stress/linux-x64/bin/mcp-stress"

// peerGrace bounds how long a peer may run past the duration it was given.
const peerGrace = 60 * time.Second

// StressSummary is the summary mcp-stress prints with --json (its latencies in milliseconds).
type StressSummary struct {
	DurationMs        float64       `json:"durationMs"`
	TotalRequests     int64         `json:"totalRequests"`
	TotalErrors       int64         `json:"totalErrors"`
	RequestsPerSecond float64       `json:"requestsPerSecond"`
	Overall           StressLatency `json:"overall"`
}

// StressLatency is mcp-stress's latency summary, in milliseconds.
type StressLatency struct {
	Count  int64   `json:"count"`
	Errors int64   `json:"errors"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Mean   float64 `json:"mean"`
	P50    float64 `json:"p50"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
}

// RunMCPStress runs `mcp-stress run -d SECONDS -c CONCURRENCY --tool TOOL --json -- ARGV…`
// with the mcp-stress binary bin (made executable if npm left it without the bit) and returns
// its summary. mcp-stress is a closed-model client: CONCURRENCY workers, each sending when its
// last call is answered.
func RunMCPStress(ctx context.Context, bin string, d time.Duration, concurrency int, tool string, argv []string) (StressSummary, error) {
	var s StressSummary
	if err := ensureExecutable(bin); err != nil {
		return s, fmt.Errorf("bench: mcp-stress: %w (install it: cd interop && npm ci)", err)
	}
	secs := max(1, int(d.Round(time.Second)/time.Second))
	ctx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second+peerGrace)
	defer cancel()
	args := append([]string{"run", "-d", strconv.Itoa(secs), "-c", strconv.Itoa(concurrency), "--tool", tool, "--json", "--"}, argv...)
	out, err := runPeer(ctx, bin, args)
	if err != nil {
		return s, fmt.Errorf("bench: mcp-stress: %w", err)
	}
	if err := json.Unmarshal(lastJSON(out), &s); err != nil || s.TotalRequests == 0 {
		return s, fmt.Errorf("bench: mcp-stress: no summary in its output (%v): %.300s", err, out)
	}
	return s, nil
}

// LoadSummary is what the bench reads of `mcpspec load --json` (metrics.json; latencies in
// milliseconds).
type LoadSummary struct {
	Latency    LoadLatency `json:"latency_ms"`
	Throughput struct {
		TotalRequests      int64   `json:"total_requests"`
		SuccessfulRequests int64   `json:"successful_requests"`
		RequestsPerSec     float64 `json:"requests_per_sec"`
	} `json:"throughput"`
	Errors struct {
		Total int64 `json:"total"`
	} `json:"errors"`
	// CPU is the user+system CPU the load process used, start-up and reports included (and
	// a stdio server's, which is its child).
	CPU time.Duration `json:"-"`
}

// LoadLatency is the latency summary of metrics.json, in milliseconds.
type LoadLatency struct {
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	Max   float64 `json:"max"`
	Mean  float64 `json:"mean"`
	Count int64   `json:"count"`
}

// HasLoad reports whether the mcpspec binary bin has the load command (the load engine).
func HasLoad(ctx context.Context, bin string) bool {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, bin, "load", "--help").Run() == nil
}

// RunLoad runs `mcpspec load ARGS… --json --out DIR` with the binary bin, writing its run
// directory under a temporary directory removed afterwards, and returns the metrics. d is the
// run's duration, which bounds the wait.
func RunLoad(ctx context.Context, bin string, d time.Duration, args []string) (LoadSummary, error) {
	var s LoadSummary
	dir, err := os.MkdirTemp("", "mcpbench-load-")
	if err != nil {
		return s, fmt.Errorf("bench: mcpspec load: %w", err)
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(ctx, d+peerGrace)
	defer cancel()
	out, cpu, err := runPeerCPU(ctx, bin, append(append([]string{"load"}, args...), "--json", "--out", dir))
	if err != nil {
		return s, fmt.Errorf("bench: mcpspec load: %w", err)
	}
	s.CPU = cpu
	if err := json.Unmarshal(out, &s); err != nil || s.Latency.Count == 0 {
		return s, fmt.Errorf("bench: mcpspec load: no metrics in its output (%v): %.300s", err, out)
	}
	return s, nil
}

// runPeer runs a peer and returns its stdout; a failure carries the end of its stderr.
func runPeer(ctx context.Context, bin string, args []string) ([]byte, error) {
	out, _, err := runPeerCPU(ctx, bin, args)
	return out, err
}

// runPeerCPU is [runPeer] that also returns the CPU (user+system) the peer used, with that of
// the children it waited for.
func runPeerCPU(ctx context.Context, bin string, args []string) ([]byte, time.Duration, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.SysProcAttr = childAttr()
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		tail := stderr.Bytes()
		if len(tail) > 600 {
			tail = tail[len(tail)-600:]
		}
		return nil, 0, fmt.Errorf("%s: %w: %s", filepath.Base(bin), err, bytes.TrimSpace(tail))
	}
	return stdout.Bytes(), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

// lastJSON returns the last top-level JSON object of out (mcp-stress prints only one, but
// tolerate a line before it).
func lastJSON(out []byte) []byte {
	if i := bytes.LastIndex(out, []byte("\n{")); i >= 0 {
		return out[i+1:]
	}
	return out
}

// ensureExecutable sets the execute bits of path if it lacks them.
func ensureExecutable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return errors.New(path + " is a directory")
	}
	if fi.Mode()&0o111 == 0o111 {
		return nil
	}
	return os.Chmod(path, fi.Mode()|0o111)
}
