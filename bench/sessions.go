//go:build unix

package bench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// SessionsSample is what [IdleSessions] measured: the client's cost of N open, idle sessions.
type SessionsSample struct {
	N int
	// Open is the time to open all N, one after the other (as `load --sessions N` does).
	Open time.Duration
	// BytesPerSession is HeapInuse+StackInuse after opening, less before, over N (after GC).
	BytesPerSession float64
	// GoroutinesPerSession and FilesPerSession are the goroutines and open file descriptors
	// the sessions added, over N.
	GoroutinesPerSession, FilesPerSession float64
}

// IdleSessions opens n sessions to the Streamable HTTP server at url the way `mcpspec load
// --sessions n` does (a serverconn opener from the URL SPEC, each session its own initialize
// and Mcp-Session-Id, or none in the stateless era of version), measures what they hold while
// idle, and closes them. The server must be another process, so that only the client is
// measured.
func IdleSessions(ctx context.Context, url, version string, n int) (SessionsSample, error) {
	s := SessionsSample{N: n}
	if n < 1 {
		return s, fmt.Errorf("bench: idle sessions: n = %d", n)
	}
	dial, info, err := serverconn.SpecDial(url, &spec.Options{})
	if err != nil {
		return s, fmt.Errorf("bench: idle sessions: %w", err)
	}
	op := serverconn.New(serverconn.Options{Info: info, Dial: dial,
		Session: session.Options{ProtocolVersion: version, ConnectTimeout: 30 * time.Second, RequestTimeout: time.Minute}})
	conns := make([]*serverconn.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	g0, f0 := runtime.NumGoroutine(), openFiles()
	start := time.Now()
	for range n {
		c, err := op.Open(ctx)
		if err != nil {
			return s, fmt.Errorf("bench: idle sessions: session %d of %d: %w", len(conns)+1, n, err)
		}
		conns = append(conns, c)
	}
	s.Open = time.Since(start)
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	s.BytesPerSession = (float64(after.HeapInuse+after.StackInuse) - float64(before.HeapInuse+before.StackInuse)) / float64(n)
	s.GoroutinesPerSession = float64(runtime.NumGoroutine()-g0) / float64(n)
	s.FilesPerSession = float64(openFiles()-f0) / float64(n)
	return s, nil
}

// openFiles counts this process's open file descriptors (-1: unknown).
func openFiles() int {
	e, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(e)
}
