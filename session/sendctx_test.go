package session

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"testing/synctest"
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

func TestSendCtxAfterFunc(t *testing.T) {
	t.Run("runs once the deadline passes", func(t *testing.T) {
		c := newSendCtx(context.Background(), time.Now().Add(20*time.Millisecond))
		defer c.release()
		ran := make(chan struct{})
		context.AfterFunc(c, func() { close(ran) })
		select {
		case <-ran:
		case <-time.After(5 * time.Second):
			t.Fatal("AfterFunc never ran")
		}
	})
	t.Run("makes no Done channel", func(t *testing.T) {
		// What the HTTP transport does per request: nobody waits on the channel, so AfterFunc
		// arms the deadline without making it (one allocation per call less).
		c := newSendCtx(context.Background(), time.Now().Add(time.Hour))
		defer c.release()
		stop := c.AfterFunc(func() {})
		defer stop()
		c.mu.Lock()
		made, armed := c.done != nil, c.timer != nil
		c.mu.Unlock()
		if made || !armed {
			t.Errorf("after AfterFunc: Done channel made = %v (want false), deadline armed = %v (want true)", made, armed)
		}
	})
	t.Run("stop prevents it", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := newSendCtx(context.Background(), time.Now().Add(time.Hour))
			ran := make(chan struct{})
			stop := context.AfterFunc(c, func() { close(ran) })
			if !stop() {
				t.Fatal("stop = false before the context ended")
			}
			c.release()
			if stop() {
				t.Error("second stop = true")
			}
			synctest.Wait() // whatever release started has run or is blocked
			select {
			case <-ran:
				t.Error("stopped function ran")
			default:
			}
		})
	})
	t.Run("registered after the end runs at once", func(t *testing.T) {
		c := newSendCtx(context.Background(), time.Now().Add(time.Hour))
		c.release()
		ran := make(chan struct{})
		stop := context.AfterFunc(c, func() { close(ran) })
		select {
		case <-ran:
		case <-time.After(5 * time.Second):
			t.Fatal("AfterFunc never ran")
		}
		if stop() {
			t.Error("stop = true after the function ran")
		}
	})
	t.Run("derived contexts end with it", func(t *testing.T) {
		parent, cancel := context.WithCancel(context.Background())
		c := newSendCtx(parent, time.Now().Add(time.Hour))
		defer c.release()
		child, cancelChild := context.WithCancel(c)
		defer cancelChild()
		cancel()
		select {
		case <-child.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("derived context never ended")
		}
		if !errors.Is(child.Err(), context.Canceled) {
			t.Errorf("child Err = %v", child.Err())
		}
	})
	t.Run("no goroutine per derived context", func(t *testing.T) {
		// What the HTTP transports do per request: context.WithCancel and context.AfterFunc on
		// the send context. Without sendCtx.AfterFunc each one parks a goroutine.
		const n = 200
		before := runtime.NumGoroutine()
		var releases []func()
		for range n {
			c := newSendCtx(context.Background(), time.Now().Add(time.Hour))
			_, cancel := context.WithCancel(c)
			stop := context.AfterFunc(c, func() {})
			releases = append(releases, func() { stop(); cancel(); c.release() })
		}
		if grew := runtime.NumGoroutine() - before; grew >= n/2 {
			t.Errorf("%d derived contexts started %d goroutines", 2*n, grew)
		}
		for _, r := range releases {
			r()
		}
	})
}
