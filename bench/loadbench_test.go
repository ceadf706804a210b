//go:build unix

package bench

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mcpStressForTest returns the mcp-stress binary npm ci installs in interop/, or "".
func mcpStressForTest(t *testing.T) string {
	p := filepath.Join("..", MCPStressPath)
	if _, err := os.Stat(p); err != nil {
		t.Logf("mcp-stress not installed (%v): its column is left out (cd interop && npm ci)", err)
		return ""
	}
	return p
}

// TestVersusSmoke runs the throughput comparison with tiny durations: every client must
// complete calls against the echo server, and the table must come out.
func TestVersusSmoke(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	stress := mcpStressForTest(t)
	r, err := Versus(ctx, VersusConfig{Mcpspec: binary(t), MCPStress: stress, Concurrency: 2, Duration: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{RowRaw, RowOurs} {
		if row := r.Row(name); row == nil || len(row.Rounds) != 1 || row.Rounds[0].PerSecond <= 0 || row.Rounds[0].P50 <= 0 {
			t.Errorf("%s: %+v", name, row)
		}
	}
	if row := r.Row(RowStress); stress != "" && (row == nil || len(row.Rounds) != 1 || row.Rounds[0].PerSecond <= 0) {
		t.Errorf("mcp-stress: %+v", row)
	}
	if r.Row(RowLoad) == nil && len(r.Skipped) == 0 {
		t.Error("no mcpspec load figure and no reason")
	}
	var out bytes.Buffer
	r.WriteTables(&out)
	for _, want := range []string{"| raw client (closed, 2 callers) |", "| mcpspec session (closed, 2 callers) |", "÷ mcp-stress", "median of 1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	t.Logf("\n%s", out.String())
}

// TestTruthSmoke runs the latency-truth experiment with a short stall, over stdio and over
// Streamable HTTP. It needs a testserver that injects delays (the load engine brings the flags).
func TestTruthSmoke(t *testing.T) {
	t.Parallel()
	for _, tr := range []Transport{Stdio, HTTP} {
		t.Run(string(tr), func(t *testing.T) {
			t.Parallel()
			testTruthSmoke(t, tr)
		})
	}
}

func testTruthSmoke(t *testing.T, tr Transport) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := TruthConfig{
		Mcpspec: binary(t), MCPStress: mcpStressForTest(t), Rate: 50, Workers: 2, Duration: 2 * time.Second, Transport: tr,
		Model: DelayModel{Fixed: 5 * time.Millisecond, ExpMean: 5 * time.Millisecond, StallAfter: 500 * time.Millisecond, StallFor: 500 * time.Millisecond},
	}
	r, err := Truth(ctx, cfg)
	if errors.Is(err, ErrNoDelayFlags) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Open.Calls) != 100 || len(r.Truth.Calls) != 100*50 {
		t.Errorf("open %d calls, truth %d", len(r.Open.Calls), len(r.Truth.Calls))
	}
	// Calls due in the stall's first 250 ms wait ≥ 250 ms whatever the machine's load.
	if n := countAtLeast(r.Open, 250*time.Millisecond); n < 10 {
		t.Errorf("open: %d calls ≥ 250ms, want ≥ 10", n)
	}
	if r.Load != nil && r.Load.Latency.Count != 100 {
		t.Errorf("mcpspec load: %d calls, want 100", r.Load.Latency.Count)
	}
	var out bytes.Buffer
	r.WriteTables(&out)
	if !strings.Contains(out.String(), "| p99.9 |") || !strings.Contains(out.String(), "Latency truth ("+string(tr)+")") {
		t.Errorf("table:\n%s", out.String())
	}
	t.Logf("\n%s", out.String())
}

func TestVersusRowMedian(t *testing.T) {
	row := VersusRow{Rounds: []Figure{{PerSecond: 30, P50: 3}, {PerSecond: 10, P50: 1}, {PerSecond: 20, P50: 2}}}
	if mid, lo, hi := row.median(); mid.P50 != 2 || lo != 10 || hi != 30 {
		t.Errorf("odd: %+v %v %v", mid, lo, hi)
	}
	row.Rounds = append(row.Rounds, Figure{PerSecond: 40, P50: 4})
	if mid, _, _ := row.median(); mid.P50 != 2 {
		t.Errorf("even: the lower middle round, got %+v", mid)
	}
}

// TestHTTPVersusSmoke runs the Streamable HTTP comparison with tiny durations: in both eras,
// closed and open, every client must complete calls against the reference server.
func TestHTTPVersusSmoke(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r, err := HTTPVersus(ctx, HTTPVersusConfig{Mcpspec: binary(t), Closed: []int{3}, Rates: []float64{40}, Duration: 500 * time.Millisecond, Rounds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 4 {
		t.Fatalf("%d rows, want 2 eras × 2 models", len(r.Rows))
	}
	for _, vr := range r.Rows {
		for name, f := range map[string][]Figure{"raw": vr.Raw, "session": vr.Session, "load": vr.Load} {
			if len(f) != 1 || f[0].PerSecond <= 0 || f[0].P50 <= 0 || f[0].CPUPerCall <= 0 {
				t.Errorf("%s %s %s: %+v", vr.Case.era(), vr.Case, name, f)
			}
		}
	}
	var out bytes.Buffer
	r.WriteTables(&out)
	for _, want := range []string{"| stateful 2025-11-25 | closed 3 |", "| stateless 2026-07-28 | open 40/s |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	t.Logf("\n%s", out.String())
}

func TestRatioOf(t *testing.T) {
	raw := []Figure{{PerSecond: 100}, {PerSecond: 200}, {PerSecond: 0}, {PerSecond: 50}}
	ours := []Figure{{PerSecond: 90}, {PerSecond: 220}, {PerSecond: 10}, {PerSecond: 60}}
	// Rounds 0.9, 1.1, 1.2 (the round with raw 0 is left out): the median is 1.1.
	if got := RatioOf(ours, raw, figRate); got < 1.099 || got > 1.101 {
		t.Errorf("RatioOf = %v, want 1.1", got)
	}
	if got := RatioOf(nil, raw, figRate); got != 0 {
		t.Errorf("no rounds: %v", got)
	}
}
