//go:build linux

package interop

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/detect/deadlock"
	"github.com/mcpspec/mcpspec/detect/headofline"
	"github.com/mcpspec/mcpspec/detect/race"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// The Go SDK twins (testdata/buggy-go): one binary built with the official go-sdk (the version
// in go.mod), serving a pair's buggy or healthy twin over stdio, or over Streamable HTTP on
// 127.0.0.1 (-http).

// buildGoTwins builds testdata/buggy-go (goBuild) and returns the binary.
func buildGoTwins(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("go not on PATH: %v", err)
	}
	return goBuild(t, "./testdata/buggy-go")
}

func goVariant(buggy bool) string {
	if buggy {
		return "buggy"
	}
	return "healthy"
}

// goTwin is the stdio SPEC of a pair's twin.
func goTwin(exe, pair string, buggy bool) twinTarget {
	return newTwinTarget(spec.Join([]string{exe, "-pair", pair, "-variant", goVariant(buggy)}))
}

// goHTTPTwin starts a pair's twin over Streamable HTTP on a loopback port and returns its
// target; the server is stopped, and checked gone, when the test ends.
func goHTTPTwin(t *testing.T, exe, pair string, buggy bool) twinTarget {
	t.Helper()
	marker := newMarker()
	cmd := exec.Command(exe, "-pair", pair, "-variant", goVariant(buggy), "-http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), markerVar+"="+marker)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		line <- l
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		assertNoMarkedProcesses(t, marker)
	})
	select {
	case l := <-line:
		url, ok := strings.CutPrefix(strings.TrimSpace(l), "listening on ")
		if !ok {
			t.Fatalf("the HTTP twin did not start: %q", l)
		}
		return twinTarget{spec: url}
	case <-time.After(startWait):
		t.Fatalf("the HTTP twin did not listen within %v", startWait)
	}
	return twinTarget{}
}

// TestBuggyGoSDK runs each detector on each Go SDK pair: found on the buggy twin with its
// class, nothing on the healthy one, and the conformance probe fails no row of a healthy twin.
func TestBuggyGoSDK(t *testing.T) {
	t.Parallel()
	twinGate(t)
	exe := buildGoTwins(t)
	twins := func(t *testing.T, each func(t *testing.T, buggy bool)) {
		for _, buggy := range []bool{true, false} {
			t.Run(goVariant(buggy), func(t *testing.T) {
				t.Parallel()
				each(t, buggy)
			})
		}
	}
	t.Run("lazy-init deadlock", func(t *testing.T) {
		t.Parallel()
		twins(t, func(t *testing.T, buggy bool) {
			r, code := goTwin(exe, "lazyinit", buggy).deadlock(t, "search")
			if buggy {
				twinExpectDeadlock(t, r, code, "search")
			} else {
				twinExpectNoDeadlock(t, r, code)
			}
		})
	})
	t.Run("lazy-init deadlock over streamable http", func(t *testing.T) {
		t.Parallel()
		twins(t, func(t *testing.T, buggy bool) {
			// Every session shares the server: its first calls are the concurrent ones.
			r, code := goHTTPTwin(t, exe, "lazyinit", buggy).deadlock(t, "search")
			if !buggy {
				twinExpectNoDeadlock(t, r, code)
				return
			}
			if code != 1 || r.Verdict != deadlock.VerdictDeadlock || len(r.Probes) == 0 || r.Probes[0].Name != "tools/list race" ||
				r.Probes[0].Verdict != deadlock.VerdictDeadlock {
				t.Errorf("exit %d, verdict %s, probes %d: the lazy-init deadlock of a shared server was missed", code, r.Verdict, len(r.Probes))
			}
		})
	})
	t.Run("race", func(t *testing.T) {
		t.Parallel()
		twins(t, func(t *testing.T, buggy bool) {
			tg := goTwin(exe, "race", buggy)
			r, code := tg.race(t, "stock_report", `{"warehouse":"all"}`)
			if buggy {
				if !r.Found() || !strings.Contains(strings.Join(r.DivergentPaths, " "), "$.structuredContent.items") || code != 1 {
					t.Errorf("exit %d, verdict %s, divergent %v (%s), want a race at the items count", code, r.Verdict, r.DivergentPaths, r.Diagnosis)
				}
			} else {
				twinExpectNoRace(t, r, code, race.VerdictByDesign)
			}
			r, code = tg.race(t, "new_session", `{"user":"ada"}`)
			twinExpectNoRace(t, r, code, race.VerdictByDesign)
		})
	})
	t.Run("head-of-line over streamable http", func(t *testing.T) {
		t.Parallel()
		twins(t, func(t *testing.T, buggy bool) {
			r, code := goHTTPTwin(t, exe, "hol", buggy).headOfLine(t, "yearly_report", `{"year":2024}`, "lookup", `{"name":"ada"}`)
			if buggy {
				twinExpectHOL(t, r, code, headofline.VerdictSerializes)
				// A global mutex: a fast call on another session waits too.
				if r.Scope != headofline.ScopeServer {
					t.Errorf("scope %q (%s), want %q: the lock is the whole server's", r.Scope, r.ScopeNote, headofline.ScopeServer)
				}
			} else {
				twinExpectHOL(t, r, code, headofline.VerdictConcurrent)
			}
		})
	})
	t.Run("leak", func(t *testing.T) {
		t.Parallel()
		twins(t, func(t *testing.T, buggy bool) {
			twinExpectLeak(t, goTwin(exe, "leak", buggy).leak(t, "render", `{"text":"hello"}`), buggy)
		})
	})
	t.Run("crash", func(t *testing.T) {
		t.Parallel()
		twins(t, func(t *testing.T, buggy bool) {
			// Schema cases only: the go-sdk ends its stdio session on a malformed frame (a crash by
			// the fuzzer's rule, and one the healthy twin shares), which the frame families would
			// report for both twins; the twins differ in list_files' handler.
			r, code := goTwin(exe, "crash", buggy).fuzz(t, 60, "--family", "schema")
			if buggy {
				twinExpectCrash(t, r, code, "list_files")
			} else {
				twinExpectNoFinding(t, r, code)
			}
		})
	})
	t.Run("probe", func(t *testing.T) {
		t.Parallel()
		for _, pair := range []string{"lazyinit", "race", "hol", "leak", "crash"} {
			t.Run(pair, func(t *testing.T) {
				// The go-sdk ends a stdio session on a line that is not JSON or not a request.
				goTwin(exe, pair, false).probeClean(t, "jsonrpc.parse-error", "jsonrpc.invalid-request")
			})
		}
		t.Run("hol over streamable http", func(t *testing.T) {
			goHTTPTwin(t, exe, "hol", false).probeClean(t)
		})
	})
}
