package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/runner"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/tcp"
)

// inProcess dials every server of a collection to one in-process reference server.
func inProcess(addr string) runner.DialFunc {
	return func(*collection.Server, string, string) (transport.Dialer, error) {
		return tcp.Dialer{Addr: addr}, nil
	}
}

// TestQuickstartExample runs examples/quickstart.yaml as shipped against the reference server.
func TestQuickstartExample(t *testing.T) {
	t.Parallel()
	srv := tcpServer(t, nil)
	cols, err := collection.LoadAll([]string{filepath.Join("..", "examples", "quickstart.yaml")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	run, err := runCols(t, &runner.Options{Dial: inProcess(srv.Addr)}, cols...)
	if err != nil {
		t.Fatal(err)
	}
	c := run.Counts()
	if c.Total < 10 || c.Passed != c.Total {
		for _, x := range run.Collections[0].Tests {
			if x.Status != result.Passed {
				t.Errorf("%s: %s %+v %+v", x.Name, x.Status, x.Failures, x.Error)
			}
		}
		t.Fatalf("counts %+v: want every test to pass", c)
	}
}

// TestQuickstartCopyIsCurrent keeps the CLI script's copy of the quickstart identical to
// examples/quickstart.yaml (test scripts cannot read files outside their archive).
func TestQuickstartCopyIsCurrent(t *testing.T) {
	t.Parallel()
	want, err := os.ReadFile(filepath.Join("..", "examples", "quickstart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ar, err := txtar.ParseFile(filepath.Join("..", "internal", "cli", "testdata", "script", "test_quickstart.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		if f.Name == "quickstart.yaml" {
			if !bytes.Equal(bytes.TrimSpace(f.Data), bytes.TrimSpace(want)) {
				t.Fatal("internal/cli/testdata/script/test_quickstart.txtar holds an outdated copy of examples/quickstart.yaml: copy it again")
			}
			return
		}
	}
	t.Fatal("test_quickstart.txtar has no quickstart.yaml")
}

// Example runs a two-test collection against an in-process reference server.
func Example() {
	srv := mcptest.NewTCPServer(nil)
	defer srv.Close()
	col, err := collection.Parse("example.yaml", []byte(`
name: Example
server: tcp://`+srv.Addr+`
tests:
  - id: add
    tool: add
    input: {a: 2, b: 3}
    extract: [{name: sum, path: $.structuredContent.sum}]
  - id: echo
    call: echo
    with: {text: "sum={{sum}}"}
    expect: [{contains: "sum=5"}]
`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	run, err := runner.New(&runner.Options{Parallel: 2}).Run(ctx, []*collection.Collection{col})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range run.Collections[0].Tests {
		fmt.Println(t.ID, t.Status, t.Extracted)
	}
	// Output:
	// add passed map[sum:5]
	// echo passed map[]
}
