//go:build linux

package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/analyze/inventory"
)

var updateInventory = flag.Bool("update-inventory", false, "rewrite testdata/inventory/*.json from the npm reference servers")

// referenceServers are the official reference servers whose inventories the offline analyses
// (tokens, docsgen, score) are calibrated on: testdata/inventory/NAME.json.
func referenceServers(t *testing.T) map[string][]string {
	root := t.TempDir()
	out := map[string][]string{}
	for name, args := range map[string][]string{
		"server-everything": {"stdio"},
		"server-filesystem": {root},
		"server-memory":     nil,
	} {
		p := requireNodePeer(t, "@modelcontextprotocol/"+name)
		out[name] = append([]string{p.node, p.entry}, args...)
	}
	return out
}

// TestReferenceInventories checks that the committed inventories of the reference servers are
// what the pinned servers offer today (-update-inventory rewrites them).
func TestReferenceInventories(t *testing.T) {
	for name, argv := range referenceServers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			env := append([]string{"MEMORY_FILE_PATH=" + filepath.Join(t.TempDir(), "memory.jsonl")}, peerEnvExtra...)
			d := stdioDialer(t, argv, env, t.TempDir())
			s := openStdioSession(t, ctx, d, nil)
			inv, err := inventory.Collect(ctx, s)
			if err != nil {
				t.Fatalf("Collect: %v", err)
			}
			got, err := json.MarshalIndent(inv, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("..", "testdata", "inventory", name+".json")
			if *updateInventory {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update-inventory to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s offers something else than %s; run go test ./interop -run TestReferenceInventories -update-inventory and review the diff", name, path)
			}
		})
	}
}
