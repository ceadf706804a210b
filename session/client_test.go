package session

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/internal/poll"
)

// TestOnRequestAnswersServerRequests checks that OnRequest sees each server request with its
// params, that its result or error goes back under the request's id, that ok=false falls back
// to the canned replies, and that Declare adds capabilities to the handshake.
func TestOnRequestAnswersServerRequests(t *testing.T) {
	f, d := newFake(t, nil)
	var mu sync.Mutex
	var seen []ServerRequest
	s := open(t, d, &Options{
		Declare: ClientCapabilities{Sampling: true, Elicitation: true},
		Roots:   []Root{{URI: "file:///canned"}},
		OnRequest: func(r ServerRequest) (ClientReply, bool) {
			mu.Lock()
			seen = append(seen, r)
			mu.Unlock()
			switch r.Method {
			case "sampling/createMessage":
				return ClientReply{Result: json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"rule"},"model":"m"}`)}, true
			case "elicitation/create":
				return ClientReply{Code: -1, Message: "user declined"}, true
			}
			return ClientReply{}, false
		},
	})
	_ = s
	init := f.received("initialize")
	if len(init) != 1 {
		t.Fatalf("%d initialize", len(init))
	}
	var ip struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	if err := json.Unmarshal(init[0].Params, &ip); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"roots", "sampling", "elicitation"} {
		if _, ok := ip.Capabilities[c]; !ok {
			t.Errorf("capability %s not declared: %s", c, init[0].Params)
		}
	}
	f.send(`{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"weather?"}}]}}`)
	f.send(`{"jsonrpc":"2.0","id":"s2","method":"elicitation/create","params":{"message":"name?"}}`)
	f.send(`{"jsonrpc":"2.0","id":"s3","method":"roots/list"}`)
	f.send(`{"jsonrpc":"2.0","id":"s4","method":"ping"}`)
	answers := func() map[string]msg {
		out := map[string]msg{}
		for _, m := range f.received("") {
			if m.Method == "" && len(m.ID) > 0 && m.ID[0] == '"' {
				out[strings.Trim(string(m.ID), `"`)] = m
			}
		}
		return out
	}
	poll.Until(t, 5*time.Second, "four answers", func() bool { return len(answers()) == 4 })
	got := answers()
	if !strings.Contains(string(got["s1"].Result), `"text":"rule"`) {
		t.Errorf("sampling answer %s", got["s1"].raw)
	}
	if !strings.Contains(string(got["s2"].Error), `"code":-1`) || !strings.Contains(string(got["s2"].Error), "user declined") {
		t.Errorf("elicitation answer %s", got["s2"].raw)
	}
	if !strings.Contains(string(got["s3"].Result), "file:///canned") {
		t.Errorf("roots answer (canned fallback) %s", got["s3"].raw)
	}
	if string(got["s4"].Result) != "{}" {
		t.Errorf("ping answer %s", got["s4"].raw)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 {
		t.Fatalf("OnRequest saw %d requests, want 3 (ping is the session's): %+v", len(seen), seen)
	}
	methods := map[string]ServerRequest{}
	for _, r := range seen {
		methods[r.Method] = r
	}
	if p := methods["sampling/createMessage"].Params; !strings.Contains(string(p), "weather?") {
		t.Errorf("sampling params %s", p)
	}
	if r := methods["roots/list"]; r.Params != nil || r.Input {
		t.Errorf("roots request %+v", r)
	}
}

// TestOnRequestAnswersInputRequests checks the stateless era's MRTR input requests go through
// OnRequest with their params, and that an error reply fails the call.
func TestOnRequestAnswersInputRequests(t *testing.T) {
	rounds := 0
	f, d := newFake(t, func(f *fake, m msg) {
		f.stateless = true
		if m.Method != "tools/call" {
			f.defaults(m)
			return
		}
		rounds++
		if rounds%2 == 1 {
			f.result(m, `{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"sure?"}}}}`)
			return
		}
		f.result(m, `{"resultType":"complete","content":[{"type":"text","text":"done"}]}`)
	})
	var got []ServerRequest
	answer := true
	s := open(t, d, &Options{
		Declare: ClientCapabilities{Elicitation: true},
		OnRequest: func(r ServerRequest) (ClientReply, bool) {
			got = append(got, r)
			if !answer {
				return ClientReply{Code: -32603, Message: "no rule matched"}, true
			}
			return ClientReply{Result: json.RawMessage(`{"action":"accept","content":{"ok":true}}`)}, true
		},
	})
	if _, err := s.CallTool(context.Background(), "x", nil, nil); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !got[0].Input || got[0].Method != "elicitation/create" || !strings.Contains(string(got[0].Params), "sure?") {
		t.Fatalf("input requests seen %+v", got)
	}
	calls := f.received("tools/call")
	if !strings.Contains(string(calls[1].Params), `"q":{"action":"accept","content":{"ok":true}}`) {
		t.Errorf("retry %s", calls[1].Params)
	}
	answer = false
	_, err := s.CallTool(context.Background(), "x", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "no rule matched") {
		t.Fatalf("err %v", err)
	}
}
