package serverconn

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/session"
)

// TestInboxRecordsAndAnswers checks that a session's inbox answers the server's requests with
// the handler set for the step, records them with the reply, records notifications in order,
// and hands out only what arrived since the last take.
func TestInboxRecordsAndAnswers(t *testing.T) {
	srv := mcptest.NewServer(nil)
	defer srv.Close()
	op := newOpener(t, srv.URL, nil, Options{Inbox: true, Session: session.Options{
		ProtocolVersion: session.Version20251125,
		Declare:         session.ClientCapabilities{Sampling: true},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := op.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Inbox.Discard()

	c.Inbox.SetHandler(func(r session.ServerRequest) (session.ClientReply, bool) {
		if r.Method != "sampling/createMessage" {
			return session.ClientReply{}, false
		}
		return session.ClientReply{Result: json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"sunny"},"model":"m"}`)}, true
	})
	res, err := c.CallTool(ctx, "ask", map[string]any{"kind": "sampling", "message": "weather?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Raw), "sunny") {
		t.Fatalf("the tool did not get the handler's reply: %s", res.Raw)
	}
	msgs, dropped := c.Inbox.Take()
	if dropped != 0 || len(msgs) != 1 {
		t.Fatalf("took %d messages (%d dropped), want the one request: %+v", len(msgs), dropped, msgs)
	}
	m := msgs[0]
	if m.Kind != KindRequest || m.Method != "sampling/createMessage" || !strings.Contains(string(m.Params), "weather?") || m.Reply == nil || !strings.Contains(string(m.Reply.Result), "sunny") {
		t.Errorf("recorded %+v", m)
	}

	// Progress notifications of one call, in order; the handler change applies at once.
	c.Inbox.SetHandler(nil)
	if _, err := c.CallTool(ctx, "slow", map[string]any{"milliseconds": 30}, &session.CallOptions{OnProgress: func(session.Progress) {}}); err != nil {
		t.Fatal(err)
	}
	msgs, _ = c.Inbox.Take()
	var progress []float64
	for _, m := range msgs {
		if m.Kind == KindNotification && m.Method == "notifications/progress" {
			var p struct{ Progress float64 }
			_ = json.Unmarshal(m.Params, &p)
			progress = append(progress, p.Progress)
		}
	}
	if len(progress) < 2 {
		t.Fatalf("progress notifications %v in %+v", progress, msgs)
	}
	for i := 1; i < len(progress); i++ {
		if progress[i] <= progress[i-1] {
			t.Errorf("progress out of order: %v", progress)
		}
	}
	if again, _ := c.Inbox.Take(); len(again) != 0 {
		t.Errorf("a second take returned %d messages", len(again))
	}
	wctx, wcancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer wcancel()
	if c.Inbox.Wait(wctx, func(m []Message) bool { return len(m) > 0 }) {
		t.Error("Wait held with nothing recorded")
	}
}

// TestInboxBounded checks the inbox keeps MaxInbox messages between takes and counts the rest.
func TestInboxBounded(t *testing.T) {
	in := newInbox()
	for i := 0; i < MaxInbox+5; i++ {
		in.notification(session.Notification{Method: "notifications/message"})
	}
	msgs, dropped := in.Take()
	if len(msgs) != MaxInbox || dropped != 5 {
		t.Fatalf("kept %d, dropped %d", len(msgs), dropped)
	}
	var nilInbox *Inbox
	if m, d := nilInbox.Take(); m != nil || d != 0 {
		t.Error("a nil inbox returned messages")
	}
}
