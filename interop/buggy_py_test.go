//go:build linux

package interop

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/detect/headofline"
	"github.com/mcpspec/mcpspec/detect/race"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// The Python twins (testdata/buggy-python): hand-rolled MCP servers over stdio in the Python
// 3.11 standard library, with a reader thread handing tool calls to a ThreadPoolExecutor and a
// lock around stdout (mcpfw.py), the way threaded Python servers are written. Each file holds
// one pair; --variant buggy|healthy picks the twin.

// pythonTwin returns the SPEC of a Python twin: the interpreter itself (not a version
// manager's shim), the script and the variant.
func pythonTwin(t *testing.T, python, script string, buggy bool) twinTarget {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("testdata", "buggy-python", script))
	if err != nil {
		t.Fatal(err)
	}
	v := "healthy"
	if buggy {
		v = "buggy"
	}
	return newTwinTarget(spec.Join([]string{python, path, "--variant", v}))
}

// requirePython returns the path of the python3 interpreter, skipping when there is none.
func requirePython(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skipf("python3 not on PATH: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "python3", "-c", "import sys; assert sys.version_info >= (3, 9); print(sys.executable)").Output()
	if err != nil {
		t.Skipf("python3 ≥ 3.9 needed: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestBuggyPython runs each detector on each Python pair: found on the buggy twin with its
// class, nothing on the healthy one, and the conformance probe fails no row of a healthy twin.
func TestBuggyPython(t *testing.T) {
	t.Parallel()
	twinGate(t)
	py := requirePython(t)
	twins := func(t *testing.T, script string, each func(t *testing.T, tg twinTarget, buggy bool)) {
		for _, buggy := range []bool{true, false} {
			name := "healthy"
			if buggy {
				name = "buggy"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				each(t, pythonTwin(t, py, script, buggy), buggy)
			})
		}
	}
	t.Run("lazy-init deadlock", func(t *testing.T) {
		t.Parallel()
		twins(t, "lazyinit.py", func(t *testing.T, tg twinTarget, buggy bool) {
			r, code := tg.deadlock(t, "search")
			if buggy {
				twinExpectDeadlock(t, r, code, "search")
			} else {
				twinExpectNoDeadlock(t, r, code)
			}
		})
	})
	t.Run("race", func(t *testing.T) {
		t.Parallel()
		twins(t, "race.py", func(t *testing.T, tg twinTarget, buggy bool) {
			// greet: a module-level "current request" shows as cross-talk.
			r, code := tg.race(t, "greet", `{"name":"ada"}`)
			if buggy {
				if !r.Found() || r.CrossTalk == nil || r.CrossTalk.Verdict != race.CrossTalkLeak || code == 0 {
					t.Errorf("greet: exit %d, verdict %s (%s), want a cross-talk race", code, r.Verdict, r.Diagnosis)
				}
			} else {
				twinExpectNoRace(t, r, code, race.VerdictDeterministic)
			}
			// stock_report: a shared tally diverges identical calls; its JSON text carries a
			// timestamp that varies by design.
			r, code = tg.race(t, "stock_report", `{"warehouse":"all"}`)
			if buggy {
				if !r.Found() || !strings.Contains(strings.Join(r.DivergentPaths, " "), ".items") || code == 0 {
					t.Errorf("stock_report: exit %d, verdict %s, divergent %v (%s), want a race at the items count", code, r.Verdict, r.DivergentPaths, r.Diagnosis)
				}
			} else {
				twinExpectNoRace(t, r, code, race.VerdictByDesign)
			}
			// new_session: a fresh id and time every call, in both twins.
			r, code = tg.race(t, "new_session", `{"user":"ada"}`)
			twinExpectNoRace(t, r, code, race.VerdictByDesign)
		})
	})
	t.Run("head-of-line", func(t *testing.T) {
		t.Parallel()
		twins(t, "hol.py", func(t *testing.T, tg twinTarget, buggy bool) {
			r, code := tg.headOfLine(t, "yearly_report", `{"year":2024}`, "lookup", `{"name":"ada"}`)
			if buggy {
				twinExpectHOL(t, r, code, headofline.VerdictSerializes)
			} else {
				twinExpectHOL(t, r, code, headofline.VerdictConcurrent)
			}
		})
	})
	t.Run("leak", func(t *testing.T) {
		t.Parallel()
		twins(t, "leak.py", func(t *testing.T, tg twinTarget, buggy bool) {
			twinExpectLeak(t, tg.leak(t, "render", `{"text":"hello"}`), buggy)
		})
	})
	t.Run("crash", func(t *testing.T) {
		t.Parallel()
		twins(t, "crash.py", func(t *testing.T, tg twinTarget, buggy bool) {
			r, code := tg.fuzz(t, 60)
			if buggy {
				twinExpectCrash(t, r, code, "translate")
			} else {
				twinExpectNoFinding(t, r, code)
			}
		})
	})
	t.Run("probe", func(t *testing.T) {
		t.Parallel()
		for _, script := range []string{"lazyinit.py", "race.py", "hol.py", "leak.py", "crash.py"} {
			t.Run(script, func(t *testing.T) {
				pythonTwin(t, py, script, false).probeClean(t)
			})
		}
	})
}
