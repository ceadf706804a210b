package session

import (
	"context"
	"errors"
	"testing"
	"time"
)

type ctxKey struct{}

func TestSendCtx(t *testing.T) {
	t.Run("deadline fires Done", func(t *testing.T) {
		c := newSendCtx(context.Background(), time.Now().Add(20*time.Millisecond))
		defer c.release()
		if c.Err() != nil {
			t.Fatal("ended early")
		}
		select {
		case <-c.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("deadline never fired")
		}
		if !errors.Is(c.Err(), context.DeadlineExceeded) {
			t.Errorf("Err = %v", c.Err())
		}
	})
	t.Run("parent cancel fires Done", func(t *testing.T) {
		parent, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "v"))
		c := newSendCtx(parent, time.Now().Add(time.Hour))
		defer c.release()
		done := c.Done()
		cancel()
		<-done
		if !errors.Is(c.Err(), context.Canceled) || c.Value(ctxKey{}) != "v" {
			t.Errorf("Err = %v value %v", c.Err(), c.Value(ctxKey{}))
		}
	})
	t.Run("passed deadline without Done", func(t *testing.T) {
		c := newSendCtx(context.Background(), time.Now().Add(-time.Second))
		if !errors.Is(c.Err(), context.DeadlineExceeded) {
			t.Errorf("Err = %v", c.Err())
		}
		select {
		case <-c.Done():
		default:
			t.Error("Done open after Err")
		}
		c.release()
	})
	t.Run("release ends it", func(t *testing.T) {
		c := newSendCtx(context.Background(), time.Now().Add(time.Hour))
		done := c.Done()
		c.release()
		<-done
		if !errors.Is(c.Err(), context.Canceled) {
			t.Errorf("Err = %v", c.Err())
		}
	})
}
