package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

// manyTools builds a server of n ordinary tools whose descriptions name their siblings, as large
// generated servers (API wrappers) do: the shape that made the shadowing rule quadratic in
// compiled regexps.
func manyTools(n int) *Metadata {
	m := &Metadata{Name: "big"}
	for i := range n {
		desc := fmt.Sprintf("Gets record %d of the inventory. Use list_records_%d to find ids; see also update_record_%d.", i, (i+1)%n, (i+7)%n)
		t, _ := json.Marshal(map[string]any{
			"name": fmt.Sprintf("get_record_%d", i), "description": desc,
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{
				"id": map[string]any{"type": "string", "description": "The record id."}}, "required": []string{"id"}},
			"annotations": map[string]any{"readOnlyHint": true},
		})
		m.Tools = append(m.Tools, t)
	}
	return m
}

// BenchmarkPassiveAudit1000 is the audit of a 1,000-tool server (target: well under a second
// per run, issue 19).
func BenchmarkPassiveAudit1000(b *testing.B) {
	m := manyTools(1000)
	for b.Loop() {
		if _, err := Run(context.Background(), []*Metadata{m}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAuditHonoursContext: a cancelled context stops the audit of 10,000 tools at its next
// check and returns the context's error, whatever rule it is in.
func TestAuditHonoursContext(t *testing.T) {
	m := manyTools(10000)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := Run(ctx, []*Metadata{m}, nil)
	if err != context.Canceled || rep != nil {
		t.Fatalf("Run on a cancelled context = %v, %v; want nil, context.Canceled", rep, err)
	}
	if _, err := PassiveAudit(ctx, m, nil); err != context.Canceled {
		t.Fatalf("PassiveAudit on a cancelled context: %v", err)
	}
	// Cancelled while the rules run: every rule loop polls the context.
	polls := 0
	ctx2 := &countingCtx{Context: context.Background(), after: 50, polls: &polls}
	if _, err := PassiveAudit(ctx2, m, nil); err != context.Canceled {
		t.Fatalf("PassiveAudit cancelled mid-way: %v after %d polls", err, polls)
	}
	if polls > 51 {
		t.Errorf("the audit went on for %d polls after the context was done", polls-50)
	}
}

// countingCtx reports Canceled from Err once it was asked after times.
type countingCtx struct {
	context.Context
	after int
	polls *int
}

func (c *countingCtx) Err() error {
	*c.polls++
	if *c.polls > c.after {
		return context.Canceled
	}
	return nil
}

// mustRun is [Run] on a live context, failing t on an error.
func mustRun(t testing.TB, metas []*Metadata, opts *Options) *Report {
	t.Helper()
	rep, err := Run(context.Background(), metas, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// mustPassive is [PassiveAudit] of m with every rule, failing t on an error.
func mustPassive(t testing.TB, m *Metadata) []Finding {
	t.Helper()
	fs, err := PassiveAudit(context.Background(), m, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}
