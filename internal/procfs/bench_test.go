//go:build linux

package procfs

import (
	"os"
	"testing"
)

func BenchmarkList(b *testing.B) {
	for b.Loop() {
		if _, err := List(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkListAndEnv(b *testing.B) {
	for b.Loop() {
		ps, _ := List()
		for _, p := range ps {
			EnvValue(p.PID, "MCPSPEC_SERVER_TREE")
		}
	}
}

func BenchmarkDescendants(b *testing.B) {
	for b.Loop() {
		if _, ok := Descendants(os.Getpid()); !ok {
			b.Skip("no children files")
		}
	}
}
