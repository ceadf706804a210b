package clock

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if err := Sleep(t.Context(), time.Second); err != nil {
			t.Errorf("Sleep = %v, want nil", err)
		}
		if got := time.Since(start); got != time.Second {
			t.Errorf("slept %v, want 1s", got)
		}
	})
}

func TestSleepCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start := time.Now()
		if err := Sleep(ctx, time.Hour); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Sleep = %v, want the deadline", err)
		}
		if got := time.Since(start); got != time.Second {
			t.Errorf("slept %v, want 1s (the deadline)", got)
		}
	})
}

func TestSleepNotPositive(t *testing.T) {
	if err := Sleep(t.Context(), 0); err != nil {
		t.Errorf("Sleep(0) = %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := Sleep(ctx, -time.Second); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep(-1s) on an ended ctx = %v, want Canceled", err)
	}
}
