//go:build windows

package stdio

import (
	"fmt"
	"os"
	"os/exec"
	"unsafe"

	"golang.org/x/sys/windows"
)

// tree is a child and every process it started: on Windows, a Job Object that kills its
// processes when its last handle closes, so nothing outlives us even if we are killed.
type tree struct {
	job windows.Handle
}

// prepare has nothing to set on Windows: the child joins the job once started.
func prepare(cmd *exec.Cmd) string { return "" }

// newTree creates a kill-on-close job and assigns the started child to it. Processes the child
// started before the assignment are not in the job.
func newTree(p *os.Process, mark string, exited <-chan struct{}) (*tree, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("create job object: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{
			LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
		},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("set job object limits: %w", err)
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(p.Pid))
	if err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("open process %d: %w", p.Pid, err)
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("assign process %d to job: %w", p.Pid, err)
	}
	return &tree{job: job}, nil
}

// canTerminate is false: Windows has no SIGTERM for a console-less child, so Close goes from
// stdin close straight to terminating the job.
const canTerminate = false

// terminate is not available on Windows; see canTerminate.
func (t *tree) terminate() error { return nil }

// kill terminates every process in the job.
func (t *tree) kill() error { return windows.TerminateJobObject(t.job, 1) }

// release closes the job handle, which kills what is left in it.
func (t *tree) release() { windows.CloseHandle(t.job) }

// exitStatus returns the exit code; Windows has no signals.
func exitStatus(ps *os.ProcessState) (code int, signal string) {
	return ps.ExitCode(), ""
}

// remember does nothing: the job holds every descendant.
func (t *tree) remember() {}
