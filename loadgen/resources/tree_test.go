//go:build unix

package resources_test

import (
	"context"
	"errors"
	"math"
	"os"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/resources"
)

func TestProcessTreeSeesAnAllocation(t *testing.T) {
	h := newHelper(t)
	tr := tree(t, h.pid())
	before := sample(t, tr)
	if want := resources.HaveRSS | resources.HaveCPU | resources.HaveThreads | resources.HaveProcs | resources.HaveFDs; before.Have != want {
		t.Errorf("Have = %v, want %v", before.Have, want)
	}
	if before.Procs != 1 || before.Threads < 1 || before.FDs < 3 || before.RSSBytes < mib {
		t.Errorf("one idle helper: %+v", before)
	}
	h.must(t, "alloc 64")
	after := sample(t, tr)
	grew := float64(after.RSSBytes) - float64(before.RSSBytes)
	upper := 80.0 * mib
	if raceEnabled {
		upper *= 3 // shadow memory
	}
	if grew < 62*mib || grew > upper {
		t.Errorf("RSS grew by %.1f MiB after allocating 64 MiB (%d → %d)", grew/mib, before.RSSBytes, after.RSSBytes)
	}
}

func TestProcessTreeCountsDescendants(t *testing.T) {
	h := newHelper(t)
	tr := tree(t, h.pid())
	before := sample(t, tr)
	h.must(t, "spawn 3 16")
	after := sample(t, tr)
	if after.Procs != 4 {
		t.Errorf("Procs = %d after spawning 3 children, want 4", after.Procs)
	}
	if after.Threads < before.Threads+3 {
		t.Errorf("Threads %d → %d after spawning 3 children", before.Threads, after.Threads)
	}
	// Each child holds 16 MiB of its own on top of a runtime like the root's.
	if grew := float64(after.RSSBytes) - float64(before.RSSBytes); grew < 3*16*mib {
		t.Errorf("tree RSS grew by %.1f MiB, want ≥ 48 MiB (three children holding 16 MiB each)", grew/mib)
	}
	if after.FDs <= before.FDs {
		t.Errorf("FDs %d → %d: the children's descriptors are not counted", before.FDs, after.FDs)
	}
}

func TestProcessTreeCountsDescriptors(t *testing.T) {
	h := newHelper(t)
	tr := tree(t, h.pid())
	h.must(t, "fds 1") // the runtime's poller opens its own descriptors with the first file
	before := sample(t, tr)
	h.must(t, "fds 20")
	after := sample(t, tr)
	if after.FDs-before.FDs != 20 {
		t.Errorf("FDs %d → %d after opening 20", before.FDs, after.FDs)
	}
}

func TestProcessTreeCPU(t *testing.T) {
	h := newHelper(t)
	tr := tree(t, h.pid())
	before := sample(t, tr)
	if !before.Have.Has(resources.HaveCPU) || before.CPUPercent < 0 {
		t.Errorf("first sample: no CPU average since start: %+v", before)
	}
	h.must(t, "burn 300")
	after := sample(t, tr)
	used := after.CPUSeconds - before.CPUSeconds
	if used < 0.27 || used > 5 { // /proc counts CPU in 10 ms ticks: two readings lose up to 20 ms
		t.Errorf("CPU seconds grew by %.3f after burning 0.3 s", used)
	}
	wall := after.At.Sub(before.At).Seconds()
	if want := used / wall * 100; math.Abs(after.CPUPercent-want) > 0.5 {
		t.Errorf("CPUPercent = %.2f, want %.2f (%.3f s CPU over %.3f s)", after.CPUPercent, want, used, wall)
	}
}

func TestProcessTreeGone(t *testing.T) {
	h := newHelper(t)
	tr := tree(t, h.pid())
	sample(t, tr)
	h.kill()
	_, err := tr.Sample(context.Background())
	if !errors.Is(err, resources.ErrGone) {
		t.Fatalf("after the process exited: %v, want ErrGone", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := resources.Watch(ctx, tr, 10*time.Millisecond, func(resources.Sample) { t.Error("a sample of an exited process") })
	if !errors.Is(r.Err, resources.ErrGone) || ctx.Err() != nil {
		t.Errorf("Watch of an exited process: %+v (ctx %v), want it to stop with ErrGone", r, ctx.Err())
	}
}

func TestProcessTreeInvalid(t *testing.T) {
	for _, pid := range []int{0, -1, math.MaxInt32 + 1} {
		if _, err := resources.ProcessTree(pid); err == nil {
			t.Errorf("ProcessTree(%d) succeeded", pid)
		}
	}
	// A pid beyond pid_max exists nowhere.
	if _, err := resources.ProcessTree(math.MaxInt32 - 1); err == nil {
		t.Error("ProcessTree of a pid that does not exist succeeded")
	}
}

func TestProcessTreeSelf(t *testing.T) {
	s := sample(t, tree(t, os.Getpid()))
	if s.Procs < 1 || s.RSSBytes == 0 || s.At.IsZero() {
		t.Errorf("this process: %+v", s)
	}
}

// BenchmarkProcessTree10 takes one sample of a tree of 10 processes (a helper and 9 children).
// Most of the cost is finding the tree: one read of every process's parent on the machine.
func BenchmarkProcessTree10(b *testing.B) {
	h := newHelper(b)
	h.must(b, "spawn 9 0")
	tr, err := resources.ProcessTree(h.pid())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var s resources.Sample
	cpu0 := processCPU()
	for b.Loop() {
		if s, err = tr.Sample(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(processCPU()-cpu0)/1e3/float64(b.N), "cpu-µs/op")
	if s.Procs != 10 {
		b.Fatalf("%d processes in the tree, want 10", s.Procs)
	}
}
