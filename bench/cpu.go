//go:build unix

package bench

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// ProcessCPU is the user+system CPU this process has used (getrusage RUSAGE_SELF): every
// thread, the garbage collector and the runtime included.
func ProcessCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// threadCPU is the CPU the calling OS thread has used. It means something only on a goroutine
// locked to its thread (runtime.LockOSThread).
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// mallocs is the number of heap objects allocated so far by the whole process.
func mallocs() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Mallocs
}

// LiveMemory is what the heap and the goroutine stacks hold after a full collection:
// MemStats.HeapInuse + StackInuse (spans in use, so fragmentation counts against us, which
// makes the figure conservative compared with HeapAlloc).
func LiveMemory() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}
