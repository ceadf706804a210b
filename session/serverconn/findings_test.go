package serverconn

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session"
)

// TestConnFindingsAndSettle: each session keeps what its server sent that answered no request;
// Settle makes a second answer to the last call arrive before the session closes; Take hands
// each finding out once.
func TestConnFindingsAndSettle(t *testing.T) {
	srv := mcptest.NewTCPServer(&mcptest.Options{DuplicateAnswers: true, StrayAnswer: true})
	defer srv.Close()
	op := newOpener(t, "tcp://"+srv.Addr, nil, Options{Session: session.Options{RequestTimeout: 5 * time.Second}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a, err := op.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := op.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := a.CallTool(ctx, "echo", map[string]any{"text": "x"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	a.Settle(ctx, nil)
	_ = a.Close()
	b.Settle(ctx, nil)
	_ = b.Close()
	all := a.Findings.All()
	var stray, dup int
	for _, f := range all {
		switch {
		case strings.Contains(f.Message, "never issued"):
			stray++
		case strings.Contains(f.Message, "not pending"):
			dup++
		}
	}
	if stray != 2 || dup != 2 {
		t.Errorf("session a: %d stray and %d duplicate findings, want 2 and 2: %+v", stray, dup, all)
	}
	if len(b.Findings.All()) != 0 {
		t.Errorf("session b made no call, yet has findings: %+v", b.Findings.All())
	}
	if got := len(a.Findings.Take()); got != 4 {
		t.Errorf("Take = %d findings, want 4", got)
	}
	if got := a.Findings.Take(); len(got) != 0 {
		t.Errorf("a second Take = %+v, want none", got)
	}
}

// TestSettlePingsOnlyAServerThatAnswers: after a timeout, a crash or an interruption there is
// nothing to wait for, so no ping is sent; after a success or an error the server sent, one is.
func TestSettlePingsOnlyAServerThatAnswers(t *testing.T) {
	srv := mcptest.NewTCPServer(nil)
	defer srv.Close()
	op := newOpener(t, "tcp://"+srv.Addr, nil, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := op.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before := srv.Stats().Requests
	for _, cat := range []session.Category{session.Timeout, session.Crash, session.Disconnected, session.Cancelled, session.Hang, session.Deadlock, session.Malformed} {
		c.Settle(ctx, &session.Error{Category: cat})
	}
	if n := srv.Stats().Requests - before; n != 0 {
		t.Errorf("%d requests sent to a server that did not answer", n)
	}
	for _, err := range []error{nil, &session.Error{Category: session.ServerError}, &session.Error{Category: session.ProtocolError}, errors.New("a tool error")} {
		c.Settle(ctx, err)
	}
	if n := srv.Stats().Requests - before; n != 4 {
		t.Errorf("%d pings sent to a server that answers, want 4", n)
	}
}
