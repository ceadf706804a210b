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

// Memory is what the heap and the goroutine stacks hold.
type Memory struct {
	// Heap is MemStats.HeapInuse: bytes in in-use heap spans, so fragmentation counts against
	// the client (a conservative figure next to HeapAlloc).
	Heap uint64
	// Live is MemStats.HeapAlloc: bytes of live heap objects (after the collection), the
	// precise figure, less sensitive to what earlier work left fragmented.
	Live uint64
	// Stack is MemStats.StackInuse: goroutine stacks.
	Stack uint64
	// Goroutines is runtime.NumGoroutine.
	Goroutines int
}

// Total is Heap + Stack.
func (m Memory) Total() uint64 { return m.Heap + m.Stack }

// LiveMemory samples Memory after two full collections (the second lets the runtime shrink
// stacks the first found mostly unused, so the figure depends less on the GC's timing).
func LiveMemory() Memory {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return Memory{Heap: m.HeapInuse, Live: m.HeapAlloc, Stack: m.StackInuse, Goroutines: runtime.NumGoroutine()}
}
