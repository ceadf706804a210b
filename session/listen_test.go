package session

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/poll"
)

func TestListen(t *testing.T) {
	f, d := newFake(t, func(f *fake, m msg) {
		f.stateless = true
		if m.Method == "subscriptions/listen" {
			f.send(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"toolsListChanged":true}}}`)
			f.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + string(m.ID) + `}}}`)
			return
		}
		f.defaults(m)
	})
	var mu sync.Mutex
	got := make(chan string, 4)
	s := open(t, d, &Options{OnNotification: func(n Notification) {
		mu.Lock()
		defer mu.Unlock()
		got <- n.Method
	}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.Listen(ctx, Subscriptions{ToolsListChanged: true})
		done <- err
	}()
	if m := <-got; m != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first notification %s", m)
	}
	if m := <-got; m != "notifications/tools/list_changed" {
		t.Fatalf("second notification %s", m)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Listen after cancel: %v", err)
	}
	poll.Until(t, 5*time.Second, "notifications/cancelled", func() bool { return len(f.received("notifications/cancelled")) == 1 })
	var p struct {
		Notifications Subscriptions              `json:"notifications"`
		Meta          map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(f.received("subscriptions/listen")[0].Params, &p)
	if !p.Notifications.ToolsListChanged || p.Meta["io.modelcontextprotocol/protocolVersion"] == nil {
		t.Errorf("listen params %s", f.received("subscriptions/listen")[0].Params)
	}
}
