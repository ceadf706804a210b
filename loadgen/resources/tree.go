package resources

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/shirou/gopsutil/v4/process"
)

// Tree samples a process and all its descendants. Create it with [ProcessTree].
type Tree struct {
	pid   int32
	start time.Time // the root's start, for the first CPU figure

	mu     sync.Mutex        // guards the fields below
	prev   map[int32]float64 // each member's CPU seconds at the last sample
	prevAt time.Time
	// parents caches the parent of every process listed at the last sample: a process's
	// parent is read once, when it is first seen (and again only if it leaves and its pid is
	// reused), so a steady sample reads the process list and the members, not every process.
	parents map[int32]int32
}

var _ Sampler = (*Tree)(nil)

// ProcessTree returns a sampler of process pid and its descendants, found afresh at every
// sample: children started or ended since count or stop counting; a grandchild whose parent
// exited is re-parented away and no longer counts. It fails when pid does not exist.
func ProcessTree(pid int) (*Tree, error) {
	if pid <= 0 || pid > math.MaxInt32 {
		return nil, fmt.Errorf("resources: process tree: invalid pid %d", pid)
	}
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return nil, fmt.Errorf("resources: process tree of pid %d: %w", pid, err)
	}
	t := &Tree{pid: int32(pid)}
	if ms, err := p.CreateTime(); err == nil {
		t.start = time.UnixMilli(ms)
	}
	return t, nil
}

// PID returns the root process's id.
func (t *Tree) PID() int { return int(t.pid) }

// String names what is sampled.
func (t *Tree) String() string { return fmt.Sprintf("process tree of pid %d", t.pid) }

// Sample reads every process of the tree. RSS, CPU, threads and processes are always
// measured; FDs when every member's descriptors could be counted (not on every platform, nor
// for processes of another user). It returns [ErrGone] once the root has exited (a zombie
// counts as exited).
func (t *Tree) Sample(ctx context.Context) (Sample, error) {
	root := &process.Process{Pid: t.pid}
	if st, err := root.StatusWithContext(ctx); err != nil || (len(st) > 0 && st[0] == process.Zombie) {
		if err == nil || errors.Is(err, process.ErrorProcessNotRunning) || !exists(ctx, t.pid) {
			return Sample{}, fmt.Errorf("resources: pid %d: %w", t.pid, ErrGone)
		}
		return Sample{}, fmt.Errorf("resources: pid %d: status: %w", t.pid, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	members, err := t.members(ctx)
	if err != nil {
		return Sample{}, err
	}
	s := Sample{Have: HaveRSS | HaveCPU | HaveThreads | HaveProcs | HaveFDs}
	cpu := make(map[int32]float64, len(members))
	for _, pid := range members {
		if err := ctx.Err(); err != nil {
			return Sample{}, fmt.Errorf("resources: %s: %w", t, err)
		}
		p := &process.Process{Pid: pid}
		mem, err := p.MemoryInfoWithContext(ctx)
		if err != nil {
			if pid == t.pid {
				return Sample{}, fmt.Errorf("resources: pid %d: memory: %w", pid, err)
			}
			continue // a descendant that just exited
		}
		s.Procs++
		s.RSSBytes += mem.RSS
		if ct, err := p.TimesWithContext(ctx); err == nil {
			cpu[pid] = ct.User + ct.System
		}
		if n, err := p.NumThreadsWithContext(ctx); err == nil {
			s.Threads += int(n)
		}
		if n, err := p.NumFDsWithContext(ctx); err == nil {
			s.FDs += int(n)
		} else {
			s.Have &^= HaveFDs
		}
	}
	s.At = time.Now()
	if s.Have&HaveFDs == 0 {
		s.FDs = 0
	}
	// CPU used since the last sample: the growth of every member seen then, and the whole of
	// every newcomer (it started since, or joined the tree by being re-parented: rare).
	var delta float64
	for pid, c := range cpu {
		s.CPUSeconds += c
		if p, ok := t.prev[pid]; ok && c >= p {
			delta += c - p
		} else {
			delta += c
		}
	}
	first := t.prev == nil
	prevAt := t.prevAt
	t.prev, t.prevAt = cpu, s.At
	if first {
		// No previous sample: the average since the root started.
		prevAt, delta = t.start, s.CPUSeconds
	}
	if wall := s.At.Sub(prevAt).Seconds(); !prevAt.IsZero() && wall > 0 {
		s.CPUPercent = delta / wall * 100
	} else {
		s.Have &^= HaveCPU
	}
	return s, nil
}

// members returns the root and its descendants, root first. It lists every process and reads
// the parent of those it has not seen before. t.mu is held.
func (t *Tree) members(ctx context.Context) ([]int32, error) {
	pids, err := process.PidsWithContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("resources: list processes: %w", err)
	}
	parents := make(map[int32]int32, len(pids))
	children := make(map[int32][]int32)
	for _, pid := range pids {
		if pid == t.pid {
			continue
		}
		ppid, seen := t.parents[pid]
		if !seen {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("resources: %s: %w", t, err)
			}
			if ppid, err = (&process.Process{Pid: pid}).PpidWithContext(ctx); err != nil {
				continue // exited meanwhile, or not ours to read
			}
		}
		parents[pid] = ppid
		children[ppid] = append(children[ppid], pid)
	}
	t.parents = parents
	out := []int32{t.pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out, nil
}

// exists reports whether pid still names a process.
func exists(ctx context.Context, pid int32) bool {
	ok, err := process.PidExistsWithContext(ctx, pid)
	return ok || err != nil
}
