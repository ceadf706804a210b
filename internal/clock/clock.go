package clock

import (
	"context"
	"time"
)

// Sleep waits for d or until ctx ends, whichever is first. It returns nil when d passed and
// ctx.Err() when ctx ended first; a d of zero or less returns at once (ctx.Err(), nil when
// ctx is still live). It never leaves a timer behind.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
