package resources_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/resources"
)

const mib = 1 << 20

func sample(t *testing.T, s resources.Sampler) resources.Sample {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := s.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func tree(t *testing.T, pid int) *resources.Tree {
	t.Helper()
	tr, err := resources.ProcessTree(pid)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
