package runner_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/runner"
)

// tcpServer starts an in-process reference server over TCP on 127.0.0.1.
func tcpServer(t testing.TB, opts *mcptest.Options) *mcptest.TCPServer {
	t.Helper()
	srv := mcptest.NewTCPServer(opts)
	t.Cleanup(srv.Close)
	return srv
}

// parse loads a collection from YAML held in the test, with {{ADDR}}-style placeholders
// replaced first (strings.NewReplacer pairs).
func parse(t testing.TB, yaml string, lo *collection.LoadOptions, repl ...string) *collection.Collection {
	t.Helper()
	if len(repl) > 0 {
		yaml = strings.NewReplacer(repl...).Replace(yaml)
	}
	if lo == nil {
		lo = &collection.LoadOptions{}
	}
	if lo.SnapshotDir == "" {
		lo.SnapshotDir = t.TempDir()
	}
	c, err := collection.Parse(filepath.Join(t.TempDir(), "c.yaml"), []byte(yaml), lo)
	if err != nil {
		t.Fatalf("parse collection: %v", err)
	}
	return c
}

// run runs cols with opts under a bounded context.
func runCols(t testing.TB, opts *runner.Options, cols ...*collection.Collection) (*result.Run, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return runner.New(opts).Run(ctx, cols)
}

// statuses maps test id → status.
func statuses(r *result.Run) map[string]result.Status {
	out := map[string]result.Status{}
	for _, c := range r.Collections {
		for _, t := range c.Tests {
			out[t.ID] = t.Status
		}
	}
	return out
}

// find returns the test with the given id.
func find(t testing.TB, r *result.Run, id string) *result.Test {
	t.Helper()
	for _, c := range r.Collections {
		for _, x := range c.Tests {
			if x.ID == id {
				return x
			}
		}
	}
	t.Fatalf("no test %q in the run", id)
	return nil
}

// recorder collects events.
type recorder struct {
	mu     sync.Mutex
	events []result.Event
}

func (r *recorder) on(e result.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) kinds() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		s := string(e.Kind)
		if e.Test != nil {
			s += ":" + e.Test.ID
		}
		out = append(out, s)
	}
	return out
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
