//go:build linux

package stdio

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/mcpspec/mcpspec/internal/procfs"
)

// treeEnv is the environment variable that marks a server's process tree on Linux: Start adds
// a random mark to it (after any mark it already holds, separated by ':'), every descendant
// inherits it, and Close finds by it, in /proc, the descendants that left the process group and
// lost their ancestry (setsid, then their parent exited), wherever they were reparented.
const treeEnv = "MCPSPEC_SERVER_TREE"

// How long the kill of a tree may go on: a process that forks while we kill is found on the
// next round.
const (
	killRounds = 50
	killPause  = 10 * time.Millisecond
)

// tree is a child and every process it started: its descendants by parent, its process group
// (it is started with Setpgid, so its pgid is its pid), and every process whose environment
// carries its mark (see [treeEnv]).
type tree struct {
	root, pgid, self int
	mark             string
	// rootStart is when the child started (0 if unknown): its descendants started later, so
	// only their environments need reading.
	rootStart uint64
	// subreaper: this process is a child subreaper, so the whole tree, orphans included, is
	// among its own descendants, and only those need scanning, not all of /proc.
	subreaper bool
	// exited is closed once the child was reaped: its pid no longer names it.
	exited <-chan struct{}
	// ours holds members seen running as our children (reparented to us, a child subreaper):
	// once dead they are our zombies to reap. Used by the goroutine running Close only.
	ours map[int]bool
	// known holds the start time of every member seen so far, by pid: a member found by its
	// parent alone (it cleared its environment) stays a member once that parent is gone. Used
	// by the goroutine running Close only.
	known map[int]uint64
}

// markEnv gives cmd a fresh mark in [treeEnv] and returns it.
func markEnv(cmd *exec.Cmd) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	mark := hex.EncodeToString(b[:])
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	value := mark
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, treeEnv+"="); ok && v != "" {
			value = v + ":" + mark // a server started by a server: keep the outer mark too
		}
	}
	cmd.Env = append(env[:len(env):len(env)], treeEnv+"="+value)
	return mark
}

// newTree returns the tree of a started child; exited is closed once the child was reaped.
func newTree(p *os.Process, mark string, exited <-chan struct{}) (*tree, error) {
	t := &tree{root: p.Pid, pgid: p.Pid, self: os.Getpid(), mark: mark, exited: exited,
		ours: map[int]bool{}, known: map[int]uint64{}}
	if pi, ok := procfs.Stat(p.Pid); ok {
		t.rootStart = pi.Start
	}
	var flag int32
	if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&flag)), 0, 0, 0); err == nil {
		t.subreaper = flag != 0
	}
	return t, nil
}

// terminate sends SIGTERM to every process of the tree.
func (t *tree) terminate() error {
	err := signalGroup(t.pgid, syscall.SIGTERM)
	live, _ := t.members()
	for _, p := range live {
		if e := syscall.Kill(p.PID, syscall.SIGTERM); e != nil && !errors.Is(e, syscall.ESRCH) && err == nil {
			err = e
		}
	}
	return err
}

// kill sends SIGKILL to every process of the tree, again and again until none is left (one may
// fork meanwhile), and reaps those that were reparented to us.
func (t *tree) kill() error {
	var err error
	for range killRounds {
		if e := signalGroup(t.pgid, syscall.SIGKILL); e != nil && err == nil {
			err = e
		}
		live, zombies := t.members()
		for _, pid := range zombies {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
			delete(t.ours, pid)
		}
		if len(live) == 0 && len(zombies) == 0 {
			return err
		}
		for _, p := range live {
			if p.PPID == t.self {
				t.ours[p.PID] = true
			}
			if e := syscall.Kill(p.PID, syscall.SIGKILL); e != nil && !errors.Is(e, syscall.ESRCH) && err == nil {
				err = e
			}
		}
		time.Sleep(killPause)
	}
	if err == nil {
		err = fmt.Errorf("processes of the tree still running after %d rounds of SIGKILL", killRounds)
	}
	return err
}

// remember records the members running now, so that they are still found once their parent
// exits and they are reparented (Close calls it before asking the child to exit).
func (t *tree) remember() { t.members() }

// release frees what the tree holds; nothing on Linux.
func (t *tree) release() {}

// rootAlive reports whether the child has not been reaped yet, so its pid still names it.
func (t *tree) rootAlive() bool {
	select {
	case <-t.exited:
		return false
	default:
		return true
	}
}

// members returns the running processes of the tree (never this process) and the dead ones
// this process must reap: members reparented to us (we may be a child subreaper) that died.
// The child itself is reaped by its exec.Cmd, never here. A subreaper scans only its own
// descendants; otherwise all of /proc is scanned. Without /proc it finds nothing: the process
// group is then all there is.
func (t *tree) members() (live []procfs.Proc, zombies []int) {
	procs, ok := []procfs.Proc(nil), false
	if t.subreaper {
		procs, ok = procfs.Descendants(t.self)
	}
	if !ok {
		var err error
		if procs, err = procfs.List(); err != nil {
			return nil, nil
		}
	}
	children := make(map[int][]int, len(procs))
	byPID := make(map[int]procfs.Proc, len(procs))
	for _, p := range procs {
		children[p.PPID] = append(children[p.PPID], p.PID)
		byPID[p.PID] = p
	}
	in := map[int]bool{}
	var queue []int
	add := func(pid int) {
		if pid != t.self && !in[pid] {
			in[pid] = true
			queue = append(queue, pid)
		}
	}
	if t.rootAlive() {
		add(t.root)
	}
	for _, p := range procs {
		switch {
		case p.Zombie:
			if p.PPID == t.self && p.PID != t.root && (p.PGID == t.pgid || t.ours[p.PID]) {
				zombies = append(zombies, p.PID)
			}
		case p.PGID == t.pgid, t.known[p.PID] == p.Start && p.Start != 0,
			t.mark != "" && p.Start >= t.rootStart && hasMark(p.PID, t.mark):
			add(p.PID)
		}
	}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			add(c)
		}
	}
	for pid := range in {
		// The root is added while its exec.Cmd has not yet reaped it, which may be after it
		// left /proc: a pid not listed has no entry, and its zero value (pid 0) must never be
		// signalled, as kill(0) is the whole process group of this process.
		if p, ok := byPID[pid]; ok && p.PID > 0 && !p.Zombie {
			live = append(live, p)
			t.known[pid] = p.Start
		}
	}
	return live, zombies
}

// hasMark reports whether process pid's environment carries mark in [treeEnv]. Processes of
// other users cannot be read, and carry no mark of ours.
func hasMark(pid int, mark string) bool {
	v, ok := procfs.EnvValue(pid, treeEnv)
	return ok && slices.Contains(strings.Split(v, ":"), mark)
}
