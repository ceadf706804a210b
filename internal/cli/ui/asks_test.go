package ui

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/session"
)

// TestAsks checks the life of a server request the page answers: shown, answered or declined
// once, refused when unknown, ended when the session closes; other methods fall through.
func TestAsks(t *testing.T) {
	b := newBroker()
	events, _ := b.subscribe(0)
	a := newAsks(b, "s1")
	if _, ok := a.onRequest(session.ServerRequest{Method: "roots/list"}); ok {
		t.Error("roots/list was taken; it should fall through to the canned reply")
	}
	type got struct {
		rep session.ClientReply
		ok  bool
	}
	ask := func() (chan got, string) {
		t.Helper()
		ch := make(chan got, 1)
		go func() {
			rep, ok := a.onRequest(session.ServerRequest{Method: "elicitation/create", Params: json.RawMessage(`{"message":"ok?"}`)})
			ch <- got{rep, ok}
		}()
		// The request is shown on the page through an "ask" event.
		timeout := time.After(10 * time.Second)
		for {
			select {
			case e := <-events:
				if e.Type != "ask" {
					continue
				}
				var d struct {
					Ask struct{ ID string } `json:"ask"`
				}
				if err := json.Unmarshal(e.Data, &d); err != nil || len(a.list()) != 1 {
					t.Fatalf("ask event %s, %d pending", e.Data, len(a.list()))
				}
				return ch, d.Ask.ID
			case <-timeout:
				t.Fatal("no ask event within 10s")
			}
		}
	}
	ch, id := ask()
	if a.reply("nope", answerJSON{Result: json.RawMessage(`{}`)}) {
		t.Error("an unknown request was answered")
	}
	a.reply(id, answerJSON{Result: json.RawMessage(`{"action":"accept","content":{"confirmed":true}}`)})
	if g := <-ch; !g.ok || g.rep.Code != 0 || string(g.rep.Result) != `{"action":"accept","content":{"confirmed":true}}` {
		t.Errorf("answered: %+v", g)
	}
	ch, id = ask()
	a.reply(id, answerJSON{Decline: "no"})
	if g := <-ch; !g.ok || g.rep.Code == 0 {
		t.Errorf("declined: %+v, want a JSON-RPC error", g)
	}
	ch, _ = ask()
	close(a.closed)
	if g := <-ch; !g.ok || g.rep.Code == 0 {
		t.Errorf("closed: %+v, want a JSON-RPC error", g)
	}
	if n := len(a.list()); n != 0 {
		t.Errorf("%d requests still pending", n)
	}
}
