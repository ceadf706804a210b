//go:build linux

package interop

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestTokensReference recounts tokens/testdata/reference.json with the reference tokenizer —
// OpenAI's tiktoken (Rust, compiled to WebAssembly in the npm package tiktoken) — and checks
// that the committed counts, which the tokens package is tested against offline, are its.
func TestTokensReference(t *testing.T) {
	t.Parallel()
	if os.Getenv(interopEnv) != "1" {
		t.Skipf("set %s=1 to run the Node interop peers (after: cd interop && npm ci)", interopEnv)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	modules, err := filepath.Abs("node_modules")
	if err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join("..", "analyze", "tokens", "testdata", "reference.json")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("..", "analyze", "tokens", "testdata", "reference.cjs"), ref)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reference.cjs: %v", err)
	}
	type entry struct {
		Label  string         `json:"label"`
		Counts map[string]int `json:"counts"`
	}
	var got, committed []entry
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("reference.cjs output: %v", err)
	}
	data, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &committed); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(committed) || len(got) < 300 {
		t.Fatalf("%d recounted, %d committed", len(got), len(committed))
	}
	for i := range got {
		for _, enc := range []string{"cl100k_base", "o200k_base"} {
			if got[i].Counts[enc] != committed[i].Counts[enc] || got[i].Counts[enc] <= 0 {
				t.Errorf("%s %s: tiktoken counts %d, the committed file says %d", committed[i].Label, enc, got[i].Counts[enc], committed[i].Counts[enc])
			}
		}
	}
}
