package barrier_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpspec/mcpspec/detect/barrier"
)

func TestGoRunsEveryPartyAfterTheRelease(t *testing.T) {
	const n = 64
	var seen [n]atomic.Int32
	var starts [n]time.Time
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	at := barrier.Go(ctx, n, func(ctx context.Context, i int) {
		starts[i] = time.Now()
		seen[i].Add(1)
	})
	if at.IsZero() {
		t.Fatal("no release time")
	}
	for i := range n {
		if seen[i].Load() != 1 {
			t.Errorf("party %d ran %d times", i, seen[i].Load())
		}
		if starts[i].Before(at) {
			t.Errorf("party %d started %v before the release", i, at.Sub(starts[i]))
		}
	}
}

func TestWaitBlocksUntilTheLastParty(t *testing.T) {
	synctest.Test(t, testWaitBlocksUntilTheLastParty)
}

func testWaitBlocksUntilTheLastParty(t *testing.T) {
	b := barrier.New(3)
	var passed atomic.Int32
	done := make(chan struct{})
	ctx := context.Background()
	for range 2 {
		go func() {
			if _, err := b.Wait(ctx); err == nil {
				passed.Add(1)
			}
			done <- struct{}{}
		}()
	}
	synctest.Wait() // both parties are blocked in Wait, or have passed it
	select {
	case <-done:
		t.Fatal("a party passed with 2 of 3 arrived")
	default:
	}
	if _, ok := b.Released(); ok {
		t.Fatal("Released before the last party")
	}
	at, err := b.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("parties not released")
		}
	}
	if got, ok := b.Released(); !ok || !got.Equal(at) || passed.Load() != 2 {
		t.Errorf("Released = %v %v, passed %d", got, ok, passed.Load())
	}
	// After the release Wait returns at once.
	if _, err := b.Wait(ctx); err != nil {
		t.Errorf("Wait after release: %v", err)
	}
}

func TestWaitHonoursTheContext(t *testing.T) {
	b := barrier.New(2)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := b.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait = %v, want the deadline", err)
	}
	var ran atomic.Int32
	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	if at := barrier.Go(cctx, 4, func(context.Context, int) { ran.Add(1) }); !at.IsZero() || ran.Load() != 0 {
		t.Errorf("Go on a cancelled context ran %d parties (release %v)", ran.Load(), at)
	}
}
