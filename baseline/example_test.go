package baseline_test

import (
	"fmt"
	"os"
	"time"

	"github.com/mcpspec/mcpspec/baseline"
	"github.com/mcpspec/mcpspec/result"
)

func run(id string, status result.Status, latency time.Duration) *result.Run {
	return &result.Run{SchemaVersion: result.SchemaVersion, ID: id, Collections: []*result.Collection{{
		Name: "smoke",
		Tests: []*result.Test{{ID: "add", Name: "add", Kind: "tool", Status: status, Latency: latency,
			Attempts: []result.Attempt{{Status: status, Latency: latency}}}},
	}}}
}

// Save the run of the main branch as a baseline, then compare a branch's run with it.
func Example() {
	dir, err := os.MkdirTemp("", "mcpspec-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	if _, err := baseline.Save(dir, "main", run("r1", result.Passed, 10*time.Millisecond), nil); err != nil {
		fmt.Println(err)
		return
	}
	base, err := baseline.Load(dir, "main")
	if err != nil {
		fmt.Println(err)
		return
	}
	diff := baseline.Compare(base, run("r2", result.Failed, 10*time.Millisecond), nil)
	fmt.Println("regressed:", diff.Regressed())
	if err := diff.WriteText(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// regressed: true
	// Compared run r2 with baseline run r1
	// REGRESSED: 1 regression (1 regressed)
	//
	// Regressions
	//   ✗ smoke › add: passed → failed
	//
	// What this means:
	//   1 test that passed on the baseline now fails: a behaviour change in the server, or a test that relied on it.
}

// Branch names become safe file names.
func ExampleSanitizeName() {
	for _, b := range []string{"feature/x", "release/1.2", "../etc"} {
		s, _ := baseline.SanitizeName(b)
		fmt.Println(s)
	}
	// Output:
	// feature-x
	// release-1.2
	// etc
}
