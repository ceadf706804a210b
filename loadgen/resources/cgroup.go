package resources

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// CgroupV2 samples a cgroup v2 directory. Create it with [Cgroup].
type CgroupV2 struct {
	dir string

	mu  sync.Mutex // guards cpu
	cpu cpuClock
}

var _ Sampler = (*CgroupV2)(nil)

// maxCgroupFile bounds what is read of one cgroup file.
const maxCgroupFile = 64 << 10

// Cgroup returns a sampler of the cgroup v2 directory dir (e.g.
// /sys/fs/cgroup/system.slice/mcp.service). RSS comes from memory.current (when the memory
// controller is enabled there), CPU from cpu.stat's usage_usec, processes from cgroup.procs
// and threads from pids.current (when the pids controller is enabled; else cgroup.threads).
// It fails when dir is not a cgroup v2 directory.
func Cgroup(dir string) (*CgroupV2, error) {
	if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err != nil {
		return nil, fmt.Errorf("resources: cgroup %s: not a cgroup directory: %w", dir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "cpu.stat")); err != nil {
		return nil, fmt.Errorf("resources: cgroup %s: no cpu.stat, not a cgroup v2 directory (cgroup v1 is not supported): %w", dir, err)
	}
	return &CgroupV2{dir: dir}, nil
}

// String names what is sampled.
func (c *CgroupV2) String() string { return "cgroup " + c.dir }

// Sample reads the cgroup's files. It returns [ErrGone] once the directory is removed.
func (c *CgroupV2) Sample(ctx context.Context) (Sample, error) {
	if err := ctx.Err(); err != nil {
		return Sample{}, fmt.Errorf("resources: %s: %w", c, err)
	}
	stat, err := c.read("cpu.stat")
	if err != nil {
		return Sample{}, err
	}
	usec, ok := statField(stat, "usage_usec")
	if !ok {
		return Sample{}, fmt.Errorf("resources: %s: cpu.stat has no usage_usec", c)
	}
	s := Sample{At: time.Now(), CPUSeconds: float64(usec) / 1e6}
	if b, err := c.read("memory.current"); err == nil {
		if v, err := strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 64); err == nil {
			s.RSSBytes, s.Have = v, s.Have|HaveRSS
		}
	} else if errors.Is(err, ErrGone) {
		return Sample{}, err
	}
	if b, err := c.read("cgroup.procs"); err == nil {
		s.Procs, s.Have = countLines(b), s.Have|HaveProcs
	}
	if b, err := c.read("pids.current"); err == nil {
		if v, err := strconv.Atoi(string(bytes.TrimSpace(b))); err == nil {
			s.Threads, s.Have = v, s.Have|HaveThreads
		}
	} else if b, err := c.read("cgroup.threads"); err == nil {
		s.Threads, s.Have = countLines(b), s.Have|HaveThreads
	}
	c.mu.Lock()
	pct, ok := c.cpu.percent(s.At, s.CPUSeconds, time.Time{})
	c.mu.Unlock()
	if ok {
		s.CPUPercent, s.Have = pct, s.Have|HaveCPU
	}
	return s, nil
}

// read returns the file name of the cgroup, at most maxCgroupFile bytes of it. A missing
// file is fs.ErrNotExist, unless the whole directory is gone: ErrGone.
func (c *CgroupV2) read(name string) ([]byte, error) {
	f, err := os.Open(filepath.Join(c.dir, name))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if _, derr := os.Stat(c.dir); errors.Is(derr, fs.ErrNotExist) {
				return nil, fmt.Errorf("resources: %s: %w", c, ErrGone)
			}
		}
		return nil, fmt.Errorf("resources: %s: %w", c, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCgroupFile))
	if err != nil {
		return nil, fmt.Errorf("resources: %s: read %s: %w", c, name, err)
	}
	return b, nil
}

// statField returns the value of key in a flat keyed file ("key value" lines).
func statField(b []byte, key string) (uint64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := bytes.Cut(sc.Bytes(), []byte{' '})
		if ok && string(k) == key {
			n, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// countLines counts the non-empty lines of b.
func countLines(b []byte) int {
	n := 0
	for line := range bytes.SplitSeq(b, []byte{'\n'}) {
		if len(bytes.TrimSpace(line)) > 0 {
			n++
		}
	}
	return n
}
