package pipe

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/session/transport"
)

func TestFramesBothWays(t *testing.T) {
	c, s := New()
	ctx := context.Background()
	buf := []byte("hello")
	if err := c.Send(ctx, buf); err != nil {
		t.Fatal(err)
	}
	buf[0] = 'j' // Send copied the frame
	got, err := s.Recv(ctx)
	if err != nil || string(got) != "hello" {
		t.Fatalf("server got %q %v", got, err)
	}
	if err := s.SendFrame(ctx, transport.Frame{Data: []byte("{"), Err: &transport.FrameError{Reason: "truncated"}}); err != nil {
		t.Fatal(err)
	}
	f, err := c.Recv()
	if err != nil || string(f.Data) != "{" || f.Err == nil || f.At.IsZero() {
		t.Fatalf("client got %+v %v", f, err)
	}
}

func TestEndsAndErrors(t *testing.T) {
	cases := []struct {
		name string
		end  func(c *Conn, s *ServerEnd)
		want error
	}{
		{"server close drains then EOF", func(_ *Conn, s *ServerEnd) { _ = s.Close() }, io.EOF},
		{"server fail with exit", func(_ *Conn, s *ServerEnd) { s.Fail(&transport.ExitError{Code: 3}) }, &transport.ExitError{}},
		{"client close", func(c *Conn, _ *ServerEnd) { _ = c.Close(); _ = c.Close() }, transport.ErrClosed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, s := New()
			ctx := context.Background()
			if tc.want != transport.ErrClosed {
				_ = s.Send(ctx, []byte("queued"))
			}
			tc.end(c, s)
			if tc.want != transport.ErrClosed {
				if f, err := c.Recv(); err != nil || string(f.Data) != "queued" {
					t.Fatalf("queued frame lost: %q %v", f.Data, err)
				}
			}
			_, err := c.Recv()
			var exit *transport.ExitError
			if _, isExit := tc.want.(*transport.ExitError); isExit {
				if !errors.As(err, &exit) || exit.Code != 3 {
					t.Fatalf("Recv err %v", err)
				}
			} else if !errors.Is(err, tc.want) {
				t.Fatalf("Recv err %v, want %v", err, tc.want)
			}
		})
	}
}

func TestSendHookAndSession(t *testing.T) {
	c, s := New()
	boom := errors.New("HTTP 404")
	s.SetSendHook(func(context.Context, []byte) error { return boom })
	if err := c.Send(context.Background(), []byte("x")); !errors.Is(err, boom) {
		t.Fatalf("hook: %v", err)
	}
	s.SetSessionID("abc")
	if c.SessionID() != "abc" {
		t.Fatal("session id")
	}
	c.ResetSession()
	c.SetProtocolVersion("2025-06-18")
	if c.SessionID() != "" || s.Resets() != 1 || s.ProtocolVersion() != "2025-06-18" {
		t.Fatal("reset/version not recorded")
	}
}

func TestSendHonoursContextWhenFull(t *testing.T) {
	c, _ := New()
	for range DefaultBuffer {
		if err := c.Send(context.Background(), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := c.Send(ctx, []byte("x")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("full queue: %v", err)
	}
}

func TestDialer(t *testing.T) {
	d := NewDialer()
	ctx := context.Background()
	go func() {
		srv, err := d.Accept(ctx)
		if err == nil {
			_ = srv.Send(ctx, []byte("hi"))
		}
	}()
	c, err := d.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if f, err := c.Recv(); err != nil || string(f.Data) != "hi" {
		t.Fatalf("%q %v", f.Data, err)
	}
	d.FailDial(io.ErrUnexpectedEOF)
	if _, err := d.Dial(ctx); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("FailDial: %v", err)
	}
	d.FailDial(nil)
	_ = d.Close()
	if _, err := d.Dial(ctx); !errors.Is(err, ErrDialerClosed) {
		t.Fatalf("closed dialer: %v", err)
	}
}
