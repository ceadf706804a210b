package result

import "testing"

func TestCountsSkipNil(t *testing.T) {
	run := &Run{Collections: []*Collection{
		nil,
		{Tests: []*Test{{Status: Passed}, nil, {Status: Failed}, {Status: Errored}, {Status: Skipped}, {Status: Passed}}},
		{},
	}}
	want := Counts{Total: 5, Passed: 2, Failed: 1, Errored: 1, Skipped: 1}
	if got := run.Counts(); got != want {
		t.Errorf("Run.Counts() = %+v, want %+v", got, want)
	}
	if run.OK() {
		t.Error("Run.OK() = true with a failed and an errored test")
	}
	var nilCol *Collection
	if got := nilCol.Counts(); got != (Counts{}) {
		t.Errorf("nil Collection.Counts() = %+v, want zero", got)
	}
	if !(&Run{}).OK() {
		t.Error("empty Run.OK() = false")
	}
}
