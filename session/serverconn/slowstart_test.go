package serverconn

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/hint"
	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session"
)

// TestSlowStartIsNamed: a server whose handshake answers only after the connect limit is slow
// to start, not silent: the failure says how long the handshake took and that ping then
// answered, against client start timeouts. Its healthy twin opens; a server that never answers
// keeps the plain timeout, saying how long mcpspec waited in all.
func TestSlowStartIsNamed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	open := func(o *mcptest.Options, limit time.Duration) error {
		srv := mcptest.NewServer(o)
		defer srv.Close()
		op := newOpener(t, srv.URL, nil, Options{Session: session.Options{ConnectTimeout: limit}})
		c, err := op.Open(ctx)
		if err == nil {
			c.Close()
		}
		return err
	}

	t.Run("slow start", func(t *testing.T) {
		err := open(&mcptest.Options{SlowInitialize: 3 * time.Second}, 2*time.Second)
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("open = %v, want an *Error", err)
		}
		want := regexp.MustCompile(`^the server is slow to start: the handshake took [3-5](\.[0-9]+)?s \(over --connect-timeout 2s\) and ping then answered in [0-9.]+[µm]?s$`)
		if !want.MatchString(e.Msg) || e.Category != session.Timeout || e.Op != "the handshake" {
			t.Errorf("got %s %q (op %q), want Timeout matching %s", e.Category, e.Msg, e.Op, want)
		}
		if h := hint.Of(err); !regexp.MustCompile(`raise --connect-timeout above the start-up time \(e\.g\. ([6-9]|1[0-9])s\).*mcpspec waits 10s by default, the TypeScript SDK 60s`).MatchString(h) {
			t.Errorf("hint = %q, want the limit to raise and the clients' start timeouts", h)
		}
	})
	t.Run("healthy twin", func(t *testing.T) {
		if err := open(nil, 2*time.Second); err != nil {
			t.Errorf("open = %v, want a session", err)
		}
	})
	t.Run("silent", func(t *testing.T) {
		err := open(&mcptest.Options{SlowInitialize: time.Hour}, 500*time.Millisecond)
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("open = %v, want an *Error", err)
		}
		if e.Msg != "no answer during the handshake within --connect-timeout 500ms" || e.Category != session.Timeout {
			t.Errorf("got %s %q, want today's timeout message", e.Category, e.Msg)
		}
		if h := hint.Of(err); !regexp.MustCompile(`no late answer came either: mcpspec waited 1\.5s in all`).MatchString(h) {
			t.Errorf("hint = %q, want how long mcpspec waited", h)
		}
	})
}

func TestSlowStartGrace(t *testing.T) {
	for _, c := range []struct{ limit, request, want time.Duration }{
		{2 * time.Second, 30 * time.Second, 4 * time.Second},   // 3× the limit
		{10 * time.Second, 30 * time.Second, 20 * time.Second}, // the defaults: up to the request timeout
		{10 * time.Second, 12 * time.Second, 2 * time.Second},  // a shorter request timeout bounds it
		{10 * time.Second, 5 * time.Second, 0},                 // never below the limit
		{time.Second, 0, 2 * time.Second},                      // 0: the default request timeout
	} {
		if got := slowStartGrace(c.limit, c.request); got != c.want {
			t.Errorf("slowStartGrace(%s, %s) = %s, want %s", c.limit, c.request, got, c.want)
		}
	}
}
