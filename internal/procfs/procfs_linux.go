//go:build linux

package procfs

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// Proc is what /proc/PID/stat says of one process.
type Proc struct {
	PID, PPID, PGID int
	// Zombie is true for a process that ended and waits to be reaped (state Z or X).
	Zombie bool
	// Start is when the process started, in clock ticks since boot: with PID it names one
	// process even if the pid is reused later.
	Start uint64
}

// List returns every process in /proc; one that ends while it reads is left out.
func List() ([]Proc, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	out := make([]Proc, 0, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // it exited meanwhile
		}
		if p, ok := ParseStat(pid, b); ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// ParseStat reads the state, parent, process group and start time of a /proc/PID/stat line:
// "pid (comm) state ppid pgrp … starttime …" (starttime is field 22), where comm may hold
// anything, so the fields are counted after the last ')'.
func ParseStat(pid int, b []byte) (Proc, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Proc{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return Proc{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgid, err2 := strconv.Atoi(f[2])
	start, err3 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return Proc{}, false
	}
	return Proc{PID: pid, PPID: ppid, PGID: pgid, Start: start, Zombie: f[0] == "Z" || f[0] == "X"}, true
}

// EnvValue returns the value of key in process pid's environment and whether it is set. The
// environment of another user's process cannot be read: it is reported unset.
func EnvValue(pid int, key string) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil || !bytes.Contains(b, []byte(key+"=")) {
		return "", false
	}
	val, ok := "", false
	for kv := range bytes.SplitSeq(b, []byte{0}) {
		if v, found := bytes.CutPrefix(kv, []byte(key+"=")); found {
			val, ok = string(v), true // the last one wins, as in exec
		}
	}
	return val, ok
}

// Stat reads one process's /proc/PID/stat; ok is false when it is gone.
func Stat(pid int) (Proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Proc{}, false
	}
	return ParseStat(pid, b)
}

// Children returns the pids of pid's children, from /proc/PID/task/*/children (every thread's);
// ok is false when the kernel does not provide those files (it needs CONFIG_PROC_CHILDREN).
func Children(pid int) (pids []int, ok bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil, false
	}
	for _, task := range tasks {
		b, err := os.ReadFile(dir + "/" + task.Name() + "/children")
		if err != nil {
			if os.IsNotExist(err) {
				return nil, false
			}
			continue // the thread ended meanwhile
		}
		for f := range strings.FieldsSeq(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				pids = append(pids, c)
			}
		}
	}
	return pids, true
}

// Descendants returns every process below pid (pid excluded), breadth first, found through
// [Children]: it reads only that subtree, not all of /proc. ok is false when the kernel does not
// provide the children files.
func Descendants(pid int) (procs []Proc, ok bool) {
	queue := []int{pid}
	seen := map[int]bool{pid: true}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		kids, ok := Children(p)
		if !ok {
			if p == pid {
				return nil, false
			}
			continue // p ended meanwhile
		}
		for _, c := range kids {
			if seen[c] {
				continue
			}
			seen[c] = true
			if st, ok := Stat(c); ok {
				procs = append(procs, st)
				queue = append(queue, c)
			}
		}
	}
	return procs, true
}
