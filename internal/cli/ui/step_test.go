package ui

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/runner"
)

// pauseOf waits for the next run.step event with a pause and returns it.
func pauseOf(t *testing.T, ch chan event) *pauseJSON {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case e := <-ch:
			if e.Type != "run.step" {
				continue
			}
			var d struct{ Paused *pauseJSON }
			if err := json.Unmarshal(e.Data, &d); err != nil {
				t.Fatal(err)
			}
			if d.Paused != nil {
				return d.Paused
			}
		case <-deadline:
			t.Fatal("no pause within 10 s")
		}
	}
}

// TestStepper checks the UI's Step hook: each pause published with the variables masked, a
// variable set, continue/skip/abort answered, an answer when not paused refused, and a pause
// nobody answers ending in an abort at its deadline.
func TestStepper(t *testing.T) {
	ev := newBroker()
	defer ev.close()
	ch, _ := ev.subscribe(0)
	s := newStepper("r1", ev, time.Hour)
	ctx := context.Background()
	if code, err := s.answer(ctx, stepAnswer{Action: "continue"}); code != http.StatusConflict || err == nil {
		t.Errorf("an answer with no pause: %d %v, want 409", code, err)
	}
	vars := collection.NewVars(nil, map[string]any{"shout": "quiet", "api_token": "s3cret"})
	info := runner.StepInfo{Collection: "Smoke", Test: &collection.Test{Name: "one"}, Index: 0, Total: 2, Vars: vars}
	mask := func(v string) string { return strings.ReplaceAll(v, "quiet", "[q]") }
	got := make(chan runner.StepAction, 1)
	go func() { got <- s.step(ctx, info, mask) }()
	p := pauseOf(t, ch)
	if p.Test != "one" || p.Total != 2 || p.Vars["api_token"] != masked || p.Vars["shout"] != "[q]" {
		t.Errorf("pause %+v: want test one of 2, api_token masked, shout masked by the run's masker", p)
	}
	for _, c := range []struct {
		a    stepAnswer
		code int
	}{
		{stepAnswer{Action: "set", Name: "shout", Value: "LOUD"}, 200},
		{stepAnswer{Action: "set", Name: "api_token", Value: masked}, 400},
		{stepAnswer{Action: "set"}, 400},
		{stepAnswer{Action: "jump"}, 400},
		{stepAnswer{Action: "skip"}, 200},
	} {
		if code, err := s.answer(ctx, c.a); code != c.code {
			t.Errorf("answer %+v: %d %v, want %d", c.a, code, err, c.code)
		}
	}
	if a := <-got; a != runner.StepSkip {
		t.Errorf("the hook returned %v, want skip", a)
	}
	if v, _ := vars.Lookup("shout"); v != "LOUD" {
		t.Errorf("shout = %v after set, want LOUD", v)
	}
	if v, _ := vars.Lookup("api_token"); v != "s3cret" {
		t.Errorf("api_token = %v: the masked value was set", v)
	}
	if s.pause() != nil {
		t.Error("still paused after the answer")
	}

	// Nobody answers: the run aborts at the deadline.
	s = newStepper("r2", ev, 50*time.Millisecond)
	if a := s.step(ctx, info, nil); a != runner.StepAbort {
		t.Errorf("an unanswered pause returned %v, want abort", a)
	}
}
