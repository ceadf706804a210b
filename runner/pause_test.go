package runner_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/runner"
)

// TestStepHook drives a run from a Step hook: it sees each test before it starts (one at a
// time, after the observers saw the previous test finish), edits a variable the next test uses, skips one (its dependent is
// skipped in turn) and aborts; the run keeps every result so far.
func TestStepHook(t *testing.T) {
	srv := tcpServer(t, nil)
	col := parse(t, `
name: Step
server: tcp://ADDR
variables: {word: hello}
tests:
  - {id: first, call: echo, with: {text: "{{word}}"}, expect: [{contains: bonjour}]}
  - {id: skipped, call: echo, with: {text: a}}
  - {id: dependent, dependsOn: [skipped], call: echo, with: {text: a}}
  - {id: second, call: echo, with: {text: b}}
  - {id: aborted, call: echo, with: {text: c}}
  - {id: never, call: echo, with: {text: d}}
`, nil, "ADDR", srv.Addr)
	var asked []string
	var mu sync.Mutex // guards seen
	var seen []string // the tests OnEvent saw finish
	opts := &runner.Options{Parallel: 4, OnEvent: func(e result.Event) {
		if e.Kind == result.TestFinished {
			mu.Lock()
			seen = append(seen, e.Test.ID)
			mu.Unlock()
		}
	}}
	opts.Step = func(ctx context.Context, next runner.StepInfo) runner.StepAction {
		// The observers have seen every test before this one settle (a prompt never shows
		// ahead of the previous test's result).
		mu.Lock()
		for _, id := range asked {
			if !slices.Contains(seen, id) {
				t.Errorf("asked about %s before the observer saw %s finish (it saw %v)", next.Test.ID, id, seen)
			}
		}
		mu.Unlock()
		asked = append(asked, next.Test.ID)
		switch next.Test.ID {
		case "first":
			if v, _ := next.Vars.Lookup("word"); v != "hello" {
				t.Errorf("word = %v before the edit", v)
			}
			next.Vars.Set("word", "bonjour")
		case "skipped":
			return runner.StepSkip
		case "aborted":
			return runner.StepAbort
		}
		if next.Total != 6 {
			t.Errorf("Total = %d", next.Total)
		}
		return runner.StepContinue
	}
	run, err := runCols(t, opts, col)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"first", "skipped", "second", "aborted"}, asked); d != "" {
		t.Errorf("asked (-want +got):\n%s", d)
	}
	want := map[string]result.Status{"first": result.Passed, "skipped": result.Skipped, "dependent": result.Skipped,
		"second": result.Passed, "aborted": result.Skipped, "never": result.Skipped}
	if d := cmp.Diff(want, statuses(run)); d != "" {
		t.Errorf("statuses (-want +got):\n%s", d)
	}
	if !run.Interrupted {
		t.Error("an aborted run is not marked Interrupted")
	}
	tests := run.Collections[0].Tests
	if r := tests[1].SkipReason; !strings.Contains(r, "step prompt") {
		t.Errorf("skipped: reason %q", r)
	}
	if r := tests[5].SkipReason; !strings.Contains(r, "aborted at the step prompt") {
		t.Errorf("never: reason %q", r)
	}
}
