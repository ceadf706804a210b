package session_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestNothingBelowImportsSession checks that the packages below the session layer (see the
// package table of DESIGN.md) reach neither session nor session/transport, even through a
// dependency: each once imported one of them for a single helper.
func TestNothingBelowImportsSession(t *testing.T) {
	const mod = "github.com/mcpspec/mcpspec/"
	below := []string{"internal/textfmt", "internal/protocol", "loadgen/metrics", "collection", "result"}
	upper := map[string]bool{mod + "session": true, mod + "session/transport": true}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go not on PATH: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	for _, pkg := range below {
		out, err := exec.CommandContext(ctx, goBin, "list", "-deps", mod+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if upper[dep] {
				t.Errorf("%s depends on %s", pkg, dep)
			}
		}
	}
}
