package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"testing"
	"time"
)

// asMainEnv makes this test binary act as mcpspec (TestMain runs main), so the start-up
// tests run the same packages the built binary links, without building it again.
const asMainEnv = "MCPSPEC_TEST_AS_MAIN"

// TestMain runs mcpspec itself when asMainEnv is set, the tests otherwise.
func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// Init budgets: what package initialisation may allocate before any verb runs. Allocation
// figures are deterministic (clock is not, and is not asserted). A package over its budget
// usually compiles regexps, parses templates or builds tables at init that only one verb
// needs: make them lazy (sync.OnceValue).
const (
	// initPackageBudget is the most one package's init may allocate.
	initPackageBudget = 200 << 10
	// initOursBudget is the most all of this module's packages may allocate together.
	initOursBudget = 256 << 10
	// initTotalBudget is the most every package's init may allocate together, the exceptions
	// below included.
	initTotalBudget = 3 << 20
)

// initExceptions are third-party packages allowed over initPackageBudget, with their own
// budget and the reason.
var initExceptions = map[string]struct {
	budget int
	why    string
}{
	// jsonschema/v6's own init() (draft.go) compiles the five draft metaschemas and their
	// vocabularies: 1.7 MB and 21,000 allocations, whatever mcpspec does. It is the newest
	// version the module proxy serves (v6.0.3).
	"github.com/santhosh-tekuri/jsonschema/v6": {2 << 20, "compiles the draft metaschemas in its init()"},
}

// testOnly are packages this test binary links and mcpspec does not: they are not counted.
var testOnly = map[string]bool{"github.com/google/go-cmp/cmp": true, "testing": true}

// initLine is one line of GODEBUG=inittrace=1.
var initLine = regexp.MustCompile(`^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)

// TestInitBudget runs `mcpspec version` with GODEBUG=inittrace=1 and fails when a package's
// initialisation allocates more than its budget, or all of them together more than theirs.
// Before the audit patterns were made lazy, analyze/audit alone allocated 2,601,184 bytes at
// init and the binary 5.47 MB.
func TestInitBudget(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "version")
	cmd.Env = append(os.Environ(), asMainEnv+"=1", "GODEBUG=inittrace=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcpspec version: %v\n%s", err, stderr.Bytes())
	}
	if !bytes.HasPrefix(stdout.Bytes(), []byte("mcpspec ")) {
		t.Fatalf("mcpspec version printed %q", stdout.Bytes())
	}
	type pkgInit struct {
		name          string
		bytes, allocs int
	}
	var inits []pkgInit
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		m := initLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		b, _ := strconv.Atoi(m[2])
		a, _ := strconv.Atoi(m[3])
		inits = append(inits, pkgInit{m[1], b, a})
	}
	if len(inits) < 50 {
		t.Fatalf("only %d init lines in GODEBUG=inittrace=1's output:\n%s", len(inits), stderr.Bytes())
	}
	sort.Slice(inits, func(i, j int) bool { return inits[i].bytes > inits[j].bytes })
	total, ours := 0, 0
	for _, p := range inits {
		if testOnly[p.name] {
			continue
		}
		total += p.bytes
		budget := initPackageBudget
		if e, ok := initExceptions[p.name]; ok {
			budget = e.budget
		} else if isOurs(p.name) {
			ours += p.bytes
		}
		if p.bytes > budget {
			t.Errorf("init of %s allocates %d bytes (%d allocations), budget %d: make what it builds lazy", p.name, p.bytes, p.allocs, budget)
		}
	}
	if ours > initOursBudget {
		t.Errorf("this module's packages allocate %d bytes at init together, budget %d", ours, initOursBudget)
	}
	if total > initTotalBudget {
		t.Errorf("init allocates %d bytes in all, budget %d", total, initTotalBudget)
	}
	top := ""
	for _, p := range inits[:5] {
		top += fmt.Sprintf("\n  %s %d B", p.name, p.bytes)
	}
	t.Logf("init allocates %d bytes in %d packages, this module's %d; the most:%s", total, len(inits), ours, top)
}

func isOurs(pkg string) bool {
	const mod = "github.com/mcpspec/mcpspec"
	return pkg == mod || len(pkg) > len(mod) && pkg[:len(mod)+1] == mod+"/"
}

// startup runs this binary as mcpspec with args and returns the time to the first byte on
// its stdout, the process's CPU time (user and system) and its peak RSS.
func startup(b *testing.B, args ...string) (firstByte, cpu time.Duration, maxRSSKB int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), asMainEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	var one [1]byte
	if _, err := out.Read(one[:]); err != nil {
		b.Fatalf("mcpspec %v printed nothing: %v", args, err)
	}
	firstByte = time.Since(start)
	if _, err := bytes.NewBuffer(nil).ReadFrom(out); err != nil {
		b.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		b.Fatalf("mcpspec %v: %v", args, err)
	}
	return firstByte, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), maxRSS(cmd.ProcessState)
}

// BenchmarkStartup is the time from starting mcpspec to the first byte on its stdout
// (first-byte-ms), its CPU time (cpu-ms, which a loaded machine inflates far less) and its
// peak RSS (rss-MB) for a verb that does nothing, a help page, a call on the built-in
// reference server (its own process) and `tokens`, the one that loads a tokenizer vocabulary.
// The goal is a first line within 50 ms; compare with the load average.
func BenchmarkStartup(b *testing.B) {
	for _, v := range []struct {
		name string
		args []string
	}{
		{"version", []string{"version"}},
		{"tools-help", []string{"tools", "--help"}},
		{"call-testserver", []string{"call", "--server", "testserver", "echo", "--args", `{"text":"hi"}`}},
		{"tokens-testserver", []string{"tokens", "--server", "testserver"}},
	} {
		b.Run(v.name, func(b *testing.B) {
			var first, cpu time.Duration
			var rss int64
			for b.Loop() {
				f, c, r := startup(b, v.args...)
				first += f
				cpu += c
				rss = max(rss, r)
			}
			b.ReportMetric(float64(first.Microseconds())/1000/float64(b.N), "first-byte-ms")
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms")
			b.ReportMetric(float64(rss)/1024, "rss-MB")
		})
	}
}
