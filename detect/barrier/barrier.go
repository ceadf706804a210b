// Package barrier releases a group of goroutines at the same instant, so that N requests reach a
// server together instead of trickling in as they are started. Without it, concurrent calls
// serialize by accident (each goroutine starts a little after the last) and the bugs that need
// real overlap — lazy-initialization deadlocks, races on shared state — stay hidden.
package barrier

import (
	"context"
	"sync"
	"time"
)

// Barrier releases its parties together once n of them have arrived. It is used once: after the
// release, Wait returns at once. It is safe for concurrent use.
type Barrier struct {
	n       int
	release chan struct{} // closed when the last party arrives

	mu      sync.Mutex // guards arrived and at
	arrived int
	at      time.Time // when the barrier opened
}

// New returns a barrier for n parties (n < 1 counts as 1).
func New(n int) *Barrier {
	return &Barrier{n: max(n, 1), release: make(chan struct{})}
}

// Wait blocks until n parties have called Wait, then returns the instant of the release. It
// returns ctx's error if ctx has ended (before or at the release); the barrier then still
// counts the party as arrived.
func (b *Barrier) Wait(ctx context.Context) (time.Time, error) {
	b.mu.Lock()
	b.arrived++
	if b.arrived == b.n {
		b.at = time.Now()
		close(b.release)
	}
	b.mu.Unlock()
	select {
	case <-b.release:
	case <-ctx.Done():
	}
	if err := ctx.Err(); err != nil {
		return time.Time{}, err
	}
	return b.at, nil
}

// Released reports whether the barrier has opened, and when.
func (b *Barrier) Released() (time.Time, bool) {
	select {
	case <-b.release:
		return b.at, true
	default:
		return time.Time{}, false
	}
}

// Go runs fn(ctx, i) for i in [0, n) on n goroutines released together by a barrier, and
// returns when every fn has returned. A goroutine whose ctx ends before the release does not
// call fn. The release time is returned (zero when no fn ran).
func Go(ctx context.Context, n int, fn func(ctx context.Context, i int)) time.Time {
	b := New(n)
	var (
		wg   sync.WaitGroup
		once sync.Once
		at   time.Time
	)
	for i := range max(n, 0) {
		wg.Go(func() {
			t, err := b.Wait(ctx)
			if err != nil {
				return
			}
			once.Do(func() { at = t })
			fn(ctx, i)
		})
	}
	wg.Wait()
	return at
}
