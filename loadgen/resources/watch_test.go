package resources_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/poll"
	"github.com/mcpspec/mcpspec/loadgen/resources"
)

// fakeSampler answers from a function, counting its calls.
type fakeSampler struct {
	calls atomic.Int64
	fn    func(ctx context.Context, n int64) (resources.Sample, error)
}

func (f *fakeSampler) Sample(ctx context.Context) (resources.Sample, error) {
	return f.fn(ctx, f.calls.Add(1))
}

func TestWatchBoundsEachSample(t *testing.T) {
	const every = 20 * time.Millisecond
	var deadlines []time.Duration
	stuck := &fakeSampler{fn: func(ctx context.Context, n int64) (resources.Sample, error) {
		d, ok := ctx.Deadline()
		if !ok {
			t.Error("a sample without a deadline")
		}
		deadlines = append(deadlines, time.Until(d))
		<-ctx.Done() // a source that never answers
		return resources.Sample{}, ctx.Err()
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan resources.WatchResult, 1)
	go func() {
		done <- resources.Watch(ctx, stuck, every, func(resources.Sample) { t.Error("fn called for a failed sample") })
	}()
	// Three stuck samples in a row end by their deadlines, not by the watch's end.
	poll.Until(t, 10*time.Second, "three stuck samples", func() bool { return stuck.calls.Load() >= 3 })
	cancel()
	var r resources.WatchResult
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Watch did not return after its context ended")
	}
	for _, d := range deadlines {
		if d > resources.MinSampleTimeout {
			t.Errorf("a sample got %v, want at most %v", d, resources.MinSampleTimeout)
		}
	}
	if r.Failures < 2 || !errors.Is(r.Err, context.DeadlineExceeded) || r.Samples != 0 {
		t.Errorf("result %+v, want ≥ 2 failures by deadline", r)
	}
}

func TestWatchDeliversAndStops(t *testing.T) {
	errFlaky := errors.New("flaky")
	s := &fakeSampler{fn: func(ctx context.Context, n int64) (resources.Sample, error) {
		switch {
		case n == 2:
			return resources.Sample{}, errFlaky
		case n == 5:
			return resources.Sample{}, fmt.Errorf("pid 1: %w", resources.ErrGone)
		}
		return resources.Sample{RSSBytes: uint64(n), Have: resources.HaveRSS}, nil
	}}
	var got []uint64
	r := resources.Watch(context.Background(), s, time.Millisecond, func(x resources.Sample) { got = append(got, x.RSSBytes) })
	if fmt.Sprint(got) != "[1 3 4]" || r.Samples != 3 || r.Failures != 2 || !errors.Is(r.Err, resources.ErrGone) {
		t.Errorf("samples %v, result %+v", got, r)
	}
	if r := resources.Watch(context.Background(), s, 0, func(resources.Sample) {}); r.Err == nil {
		t.Error("a zero interval accepted")
	}
}

func TestFieldsString(t *testing.T) {
	for f, want := range map[resources.Fields]string{0: "none", resources.HaveRSS | resources.HaveFDs: "rss,fds", resources.HaveProcs: "procs"} {
		if f.String() != want {
			t.Errorf("%d.String() = %q, want %q", f, f.String(), want)
		}
	}
}
