package runner_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/runner"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/linestream"
)

// benchCollection generates n tests over the reference server's tools: echo with a text
// assertion, add with schema/equals assertions and an extraction the next test uses, slow
// (1ms of server time) and a resource read.
func benchCollection(n int, server string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: Bench\nserver: %s\ndefaults: {timeout: 10s}\ntests:\n", server)
	for i := range n {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "  - {id: t%d, call: echo, with: {text: \"hello %d\"}, expect: [{contains: \"hello %d\"}]}\n", i, i, i)
		case 1:
			fmt.Fprintf(&b, "  - id: t%d\n    tool: add\n    input: {a: %d, b: 1}\n    assertions:\n      - {type: schema}\n      - {type: equals, path: $.structuredContent.sum, value: %d}\n    extract: [{name: s%d, path: $.structuredContent.sum}]\n", i, i, i+1, i)
		case 2:
			fmt.Fprintf(&b, "  - {id: t%d, call: echo, with: {text: \"n={{s%d}}\"}, expect: [{equals: {path: \"$.content[0].text\", value: \"n=%d\"}}]}\n", i, i-1, i)
		case 3:
			fmt.Fprintf(&b, "  - {id: t%d, call: slow, with: {milliseconds: 1}}\n", i)
		}
	}
	return b.String()
}

// pipeServer serves the reference server over a pair of OS pipes, the stdio framing without a
// process: the dialer hands the client ends to a linestream connection.
type pipeServer struct {
	mu sync.Mutex // guards wg.Add against wait
	wg sync.WaitGroup
}

func (p *pipeServer) Dial(ctx context.Context) (transport.Conn, error) {
	cr, sw, err := os.Pipe() // server → client
	if err != nil {
		return nil, err
	}
	sr, cw, err := os.Pipe() // client → server
	if err != nil {
		cr.Close()
		sw.Close()
		return nil, err
	}
	p.mu.Lock()
	p.wg.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.wg.Done()
		_ = mcptest.ServeStdio(context.Background(), sr, sw, nil)
		sr.Close()
		sw.Close()
	}()
	return linestream.NewConn(cr, cw, func() error { cw.Close(); return cr.Close() }, nil), nil
}

// benchRun measures runs of the generated collection and reports tests/s, time to first
// result and the run's wall time over the sum of the tests' wire latencies.
func benchRun(b *testing.B, col *collection.Collection, opts runner.Options) {
	var wall, first, latency time.Duration
	tests := 0
	b.ResetTimer()
	for range b.N {
		var once sync.Once
		start := time.Now()
		var firstAt time.Time
		firstSeen := make(chan struct{})
		o := opts
		o.OnEvent = func(e result.Event) {
			if e.Kind == result.TestFinished {
				once.Do(func() { firstAt = e.At; close(firstSeen) })
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		run, err := runner.New(&o).Run(ctx, []*collection.Collection{col})
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		wall += time.Since(start)
		<-firstSeen
		first += firstAt.Sub(start)
		for _, t := range run.Collections[0].Tests {
			if t.Status != result.Passed {
				b.Fatalf("%s: %s %+v %+v", t.ID, t.Status, t.Failures, t.Error)
			}
			latency += t.Latency
			tests++
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(tests)/wall.Seconds(), "tests/s")
	b.ReportMetric(float64(first.Microseconds())/float64(b.N), "µs-to-first-result")
	b.ReportMetric(wall.Seconds()/latency.Seconds(), "wall/Σlatency")
}

// BenchmarkRun200Pipe runs 200 tests against the reference server over OS pipes in-process.
func BenchmarkRun200Pipe(b *testing.B) {
	p := &pipeServer{}
	col, err := collection.Parse("bench.yaml", []byte(benchCollection(200, "tcp://placeholder:1")), nil)
	if err != nil {
		b.Fatal(err)
	}
	benchRun(b, col, runner.Options{Dial: func(*collection.Server, string, string) (transport.Dialer, error) { return p, nil }})
	p.mu.Lock()
	p.wg.Wait()
	p.mu.Unlock()
}

// BenchmarkRun200Stdio runs 200 tests against `mcpspec testserver` started as a child process
// over stdio, as `mcpspec test` does (the binary is built once, first).
func BenchmarkRun200Stdio(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "mcpspec")
	build := exec.Command("go", "build", "-o", bin, "github.com/mcpspec/mcpspec/cmd/mcpspec")
	if out, err := build.CombinedOutput(); err != nil {
		b.Skipf("cannot build mcpspec: %v\n%s", err, out)
	}
	col, err := collection.Parse("bench.yaml", []byte(benchCollection(200, "testserver")), nil)
	if err != nil {
		b.Fatal(err)
	}
	benchRun(b, col, runner.Options{Executable: bin})
}

// BenchmarkRun200StdioParallel4 is BenchmarkRun200Stdio with --parallel 4 (dependencies kept).
func BenchmarkRun200StdioParallel4(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "mcpspec")
	build := exec.Command("go", "build", "-o", bin, "github.com/mcpspec/mcpspec/cmd/mcpspec")
	if out, err := build.CombinedOutput(); err != nil {
		b.Skipf("cannot build mcpspec: %v\n%s", err, out)
	}
	col, err := collection.Parse("bench.yaml", []byte(benchCollection(200, "testserver")), nil)
	if err != nil {
		b.Fatal(err)
	}
	benchRun(b, col, runner.Options{Executable: bin, Parallel: 4})
}
