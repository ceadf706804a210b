package reporters_test

import (
	"fmt"
	"os"
	"time"

	"github.com/mcpspec/mcpspec/reporters"
	"github.com/mcpspec/mcpspec/result"
)

func exampleRun() *result.Run {
	return &result.Run{
		SchemaVersion: result.SchemaVersion,
		ID:            "demo",
		Duration:      20 * time.Millisecond,
		Collections: []*result.Collection{{
			Name: "smoke",
			File: "smoke.yaml",
			Tests: []*result.Test{
				{ID: "echo", Name: "echo", Kind: "tool", Status: result.Passed, Duration: 3 * time.Millisecond, Latency: 2 * time.Millisecond},
				{ID: "add", Name: "add", Kind: "tool", Status: result.Failed, Duration: 4 * time.Millisecond, Latency: 3 * time.Millisecond,
					Failures: []result.Failure{{Assertion: "equals", Path: "$.sum", Expected: "3", Actual: "4", Message: "expected 3, got 4", Line: 9}}},
			},
		}},
	}
}

// A reporter is chosen by name and renders the finished run.
func Example() {
	rep, err := reporters.New("tap", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := rep.Report(os.Stdout, exampleRun()); err != nil {
		fmt.Println(err)
	}
	// Output:
	// TAP version 13
	// 1..2
	// # collection: smoke (smoke.yaml)
	// ok 1 - smoke › echo
	// not ok 2 - smoke › add
	//   ---
	//   message: expected 3, got 4
	//   severity: fail
	//   collection: smoke
	//   file: smoke.yaml
	//   failures:
	//     - assertion: equals
	//       path: $.sum
	//       line: 9
	//       expected: "3"
	//       actual: "4"
	//       message: expected 3, got 4
	//   duration: 4.0ms
	//   ...
}

// The console reporter streams a line per finished test, then prints the failure digest.
func ExampleConsole() {
	run := exampleRun()
	con := reporters.NewConsole(&reporters.Options{Live: os.Stdout})
	var s reporters.Streamer = con // what the runner's observer calls
	col := run.Collections[0]
	for _, t := range col.Tests {
		s.Event(result.Event{Kind: result.TestFinished, Run: run, Collection: col, Test: t})
	}
	if err := con.Report(os.Stdout, run); err != nil {
		fmt.Println(err)
	}
	// Output:
	// ✓ smoke › echo  3.0ms (response 2.0ms)
	//   ✗ smoke › add  4.0ms (response 3.0ms)  — equals at $.sum
	//
	// FAILURES (1)
	//
	//   1) smoke › add [failed]
	//      collection: smoke.yaml
	//      assertion:  equals at $.sum  (smoke.yaml:9)
	//        expected: 3
	//        actual:   4
	//        message:  expected 3, got 4
	//
	// FAIL  2 tests: 1 passed, 1 failed · pass rate 50.0% · 20ms
	//   1 of 2 tests that ran did not pass. 1 failed an assertion: the server answered, but not as expected.
	//   No single response dominates latency: p50 2.0ms, p95 3.0ms, slowest add (3.0ms).
}
