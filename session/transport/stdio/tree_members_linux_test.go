//go:build linux

package stdio

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// TestMembersNeverListPidZero: a root its exec.Cmd reaped, but whose exit is not yet announced
// (exited still open), is gone from /proc. members used to return it as the zero Proc, pid 0,
// and kill then sent kill(0, SIGKILL): the whole process group of the test binary, go test and
// the shell that ran it died (seen as silent CI deaths under load).
func TestMembersNeverListPidZero(t *testing.T) {
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	for _, subreaper := range []bool{false, true} {
		tr := &tree{root: gone.Process.Pid, pgid: gone.Process.Pid, self: os.Getpid(),
			exited: make(chan struct{}), subreaper: subreaper, ours: map[int]bool{}, known: map[int]uint64{}}
		live, zombies := tr.members()
		for _, p := range live {
			if p.PID <= 1 {
				t.Fatalf("subreaper %v: members listed pid %d (%+v): kill would signal our own group", subreaper, p.PID, live)
			}
		}
		for _, pid := range zombies {
			if pid <= 1 {
				t.Fatalf("subreaper %v: zombie pid %d", subreaper, pid)
			}
		}
	}
}

// TestSignalGroupRefusesOurOwnGroup: a pgid of 0 or 1 is never signalled (kill(0) is our own
// group, kill(-1) every process we may signal).
func TestSignalGroupRefusesOurOwnGroup(t *testing.T) {
	for _, pgid := range []int{0, 1, -5} {
		if err := signalGroup(pgid, syscall.Signal(0)); err == nil {
			t.Errorf("signalGroup(%d) = nil, want a refusal", pgid)
		}
	}
}
