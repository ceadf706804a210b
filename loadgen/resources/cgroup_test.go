//go:build unix

package resources_test

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpspec/mcpspec/loadgen/resources"
)

// writeFiles writes name → content files into dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCgroupFiles reads a directory laid out as cgroup v2 lays out its files.
func TestCgroupFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "srv.scope")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{
		"cgroup.procs":   "101\n102\n",
		"cgroup.threads": "101\n102\n103\n",
		"cpu.stat":       "usage_usec 2000000\nuser_usec 1500000\nsystem_usec 500000\nnr_periods 0\n",
		"memory.current": "52428800\n",
		"pids.current":   "7\n",
	})
	cg, err := resources.Cgroup(dir)
	if err != nil {
		t.Fatal(err)
	}
	first := sample(t, cg)
	want := resources.HaveRSS | resources.HaveThreads | resources.HaveProcs // no CPU figure without a previous sample
	if first.Have != want || first.RSSBytes != 52428800 || first.Procs != 2 || first.Threads != 7 || first.CPUSeconds != 2 {
		t.Errorf("first sample: %+v", first)
	}
	writeFiles(t, dir, map[string]string{"cpu.stat": "usage_usec 2500000\n"})
	if err := os.Remove(filepath.Join(dir, "pids.current")); err != nil {
		t.Fatal(err)
	}
	second := sample(t, cg)
	if !second.Have.Has(resources.HaveCPU | resources.HaveThreads) {
		t.Errorf("second sample lacks CPU or threads: %v", second.Have)
	}
	if second.Threads != 3 {
		t.Errorf("Threads = %d without pids.current, want 3 (cgroup.threads)", second.Threads)
	}
	wall := second.At.Sub(first.At).Seconds()
	if want := 0.5 / wall * 100; math.Abs(second.CPUPercent-want) > 1e-6*want {
		t.Errorf("CPUPercent = %v, want %v", second.CPUPercent, want)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := cg.Sample(t.Context()); !errors.Is(err, resources.ErrGone) {
		t.Errorf("removed cgroup: %v, want ErrGone", err)
	}
}

func TestCgroupRejects(t *testing.T) {
	plain := t.TempDir()
	if _, err := resources.Cgroup(plain); err == nil || !strings.Contains(err.Error(), "not a cgroup directory") {
		t.Errorf("a plain directory: %v", err)
	}
	v1 := t.TempDir()
	writeFiles(t, v1, map[string]string{"cgroup.procs": "", "memory.usage_in_bytes": "1"})
	if _, err := resources.Cgroup(v1); err == nil || !strings.Contains(err.Error(), "cgroup v1") {
		t.Errorf("a cgroup v1 directory: %v", err)
	}
	bad := t.TempDir()
	writeFiles(t, bad, map[string]string{"cgroup.procs": "", "cpu.stat": "user_usec x\n"})
	cg, err := resources.Cgroup(bad)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cg.Sample(t.Context()); err == nil {
		t.Error("cpu.stat without usage_usec sampled")
	}
}

// TestCgroupReal moves a helper process into a new cgroup v2 of its own and samples it. It
// needs a writable cgroup v2 hierarchy (root, or a delegated subtree).
func TestCgroupReal(t *testing.T) {
	mount, err := cgroup2Mount()
	if err != nil {
		t.Skipf("no cgroup v2 hierarchy: %v", err)
	}
	dir := filepath.Join(mount, fmt.Sprintf("mcpspec-resources-test-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cgroup v2 at %s is not writable here: %v", mount, err)
	}
	t.Cleanup(func() {
		if err := os.Remove(dir); err != nil {
			t.Errorf("remove test cgroup: %v", err)
		}
	})
	h := newHelper(t)
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(h.pid())), 0o644); err != nil {
		h.kill()
		t.Skipf("cannot move a process into %s: %v", dir, err)
	}
	// The cgroup can be removed only once empty: stop the helper first (cleanups run last first).
	t.Cleanup(h.stop)
	cg, err := resources.Cgroup(dir)
	if err != nil {
		t.Fatal(err)
	}
	before := sample(t, cg)
	if before.Procs != 1 || !before.Have.Has(resources.HaveProcs|resources.HaveThreads) || before.Threads < 1 {
		t.Errorf("one helper in the cgroup: %+v", before)
	}
	h.must(t, "burn 300")
	h.must(t, "alloc 64")
	after := sample(t, cg)
	if used := after.CPUSeconds - before.CPUSeconds; used < 0.27 { // two readings in 10 ms ticks
		t.Errorf("cgroup CPU grew by %.3f s after burning 0.3 s", used)
	}
	if !after.Have.Has(resources.HaveCPU) || after.CPUPercent <= 0 {
		t.Errorf("no CPU percent: %+v", after)
	}
	if !after.Have.Has(resources.HaveRSS) {
		t.Logf("memory controller not enabled in %s (cgroup.controllers of the parent): no memory figure to check", dir)
		return
	}
	if grew := float64(after.RSSBytes) - float64(before.RSSBytes); grew < 62*mib {
		t.Errorf("memory.current grew by %.1f MiB after allocating 64 MiB", grew/mib)
	}
}

// cgroup2Mount returns the mount point of a cgroup v2 hierarchy from /proc/self/mountinfo.
func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ... - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if ok && len(fields) >= 5 && len(tail) >= 1 && tail[0] == "cgroup2" {
			return fields[4], nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", errors.New("none mounted")
}
