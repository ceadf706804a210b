package ui

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mcpspec/mcpspec/assert"
	"github.com/mcpspec/mcpspec/internal/redact"
	"github.com/mcpspec/mcpspec/runner"
)

// StepFunc is what answers `mcpspec test --step` before each test in place of the terminal
// prompt; mask masks the run's secrets in what it shows.
type StepFunc = func(ctx context.Context, next runner.StepInfo, mask func(string) string) runner.StepAction

// StepExecFunc is [ExecFunc] for `mcpspec test --step`: the verb asks step before each test.
type StepExecFunc func(ctx context.Context, args []string, stdout, stderr io.Writer, step StepFunc) int

// DefaultStepWait is how long a run stepped from the UI waits at a pause for an answer before
// it aborts: a page closed or forgotten must not hold a run (and its servers) forever.
const DefaultStepWait = 10 * time.Minute

// answerWait bounds how long an API call waits to hand its answer to a paused run.
const answerWait = 5 * time.Second

// pauseJSON is a stepped run paused before a test, as the page shows it.
type pauseJSON struct {
	Run        string `json:"run"`
	Collection string `json:"collection"`
	Test       string `json:"test"`
	// Index counts the tests started or settled before this one; Total the tests selected.
	Index int `json:"index"`
	Total int `json:"total"`
	// Vars are the collection's variables, secrets masked.
	Vars map[string]string `json:"vars"`
	// Deadline is when the run aborts without an answer.
	Deadline time.Time `json:"deadline"`
}

// stepAnswer is one answer of the page to a pause: an action, or a variable to set.
type stepAnswer struct {
	Action string `json:"action"` // continue, skip, abort or set
	Name   string `json:"name,omitempty"`
	Value  string `json:"value,omitempty"`
}

// stepMsg is an answer on its way to the hook, with where the hook says how it went (buffered:
// the hook never waits for the handler).
type stepMsg struct {
	stepAnswer
	reply chan error
}

// uiStepper is a run's Step hook fed by the API: it publishes each pause as a run.step event
// and waits for an answer, at most wait.
type uiStepper struct {
	run    string
	events *broker
	wait   time.Duration
	// answers carries the page's answers to the hook while it waits.
	answers chan stepMsg

	// mu guards paused.
	mu     sync.Mutex
	paused *pauseJSON
}

func newStepper(run string, ev *broker, wait time.Duration) *uiStepper {
	return &uiStepper{run: run, events: ev, wait: wait, answers: make(chan stepMsg)}
}

// pause is the current pause, or nil.
func (s *uiStepper) pause() *pauseJSON {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paused
}

func (s *uiStepper) show(p *pauseJSON) {
	s.mu.Lock()
	s.paused = p
	s.mu.Unlock()
	s.events.publish("run.step", map[string]any{"run": s.run, "paused": p})
}

// masked is what a secret variable's value shows as.
const masked = "••••••"

// vars is the scope's variables as text, masked: by the run's masker, and wholly when the
// name is a secret's.
func vars(next runner.StepInfo, mask func(string) string) map[string]string {
	out := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(next.Vars.Values())) {
		v, _ := next.Vars.Lookup(k)
		s := assert.ToString(v)
		switch {
		case redact.IsSecretName(k) && s != "":
			s = masked
		case mask != nil:
			s = next.Vars.Masker().Mask(mask(s))
		default:
			s = next.Vars.Masker().Mask(s)
		}
		out[k] = s
	}
	return out
}

// step is the runner's Step hook (through the CLI's --step): it waits for the page.
func (s *uiStepper) step(ctx context.Context, next runner.StepInfo, mask func(string) string) runner.StepAction {
	name := next.Test.Name
	if name == "" {
		name = next.Test.ID
	}
	timer := time.NewTimer(s.wait)
	defer timer.Stop()
	p := &pauseJSON{Run: s.run, Collection: next.Collection, Test: name, Index: next.Index, Total: next.Total,
		Vars: vars(next, mask), Deadline: time.Now().Add(s.wait)}
	s.show(p)
	defer s.show(nil)
	for {
		select {
		case <-ctx.Done():
			return runner.StepAbort
		case <-timer.C:
			s.events.publish("run.log", map[string]any{"run": s.run, "line": fmt.Sprintf("no answer at the step pause within %s: aborting the run", s.wait)})
			return runner.StepAbort
		case a := <-s.answers:
			var act runner.StepAction = -1
			var err error
			switch a.Action {
			case "continue":
				act = runner.StepContinue
			case "skip":
				act = runner.StepSkip
			case "abort":
				act = runner.StepAbort
			case "set":
				if a.Name == "" {
					err = fmt.Errorf("set needs a variable name")
					break
				}
				if a.Value == masked {
					err = fmt.Errorf("%s: %q is the masked value; type the new value", a.Name, masked)
					break
				}
				next.Vars.Set(a.Name, a.Value)
				c := *p
				c.Vars = vars(next, mask)
				p = &c
				s.show(p)
			default:
				err = fmt.Errorf("unknown action %q: use continue, skip, abort or set", a.Action)
			}
			a.reply <- err
			if act >= 0 {
				return act
			}
		}
	}
}

// answer hands a to the paused hook and returns how it went; 409 when the run is not paused.
func (s *uiStepper) answer(ctx context.Context, a stepAnswer) (int, error) {
	if s.pause() == nil {
		return http.StatusConflict, fmt.Errorf("the run is not paused")
	}
	ctx, cancel := context.WithTimeout(ctx, answerWait)
	defer cancel()
	m := stepMsg{stepAnswer: a, reply: make(chan error, 1)}
	select {
	case s.answers <- m:
	case <-ctx.Done():
		return http.StatusConflict, fmt.Errorf("the run is not paused")
	}
	select {
	case err := <-m.reply:
		if err != nil {
			return http.StatusBadRequest, err
		}
		return http.StatusOK, nil
	case <-ctx.Done():
		return http.StatusGatewayTimeout, fmt.Errorf("the run did not take the answer within %s", answerWait)
	}
}

// step is POST /api/runs/{id}/step {"action": "continue"|"skip"|"abort"} or {"action": "set",
// "name", "value"}.
func (rs *runs) step(w http.ResponseWriter, r *http.Request) {
	x, ok := rs.find(w, r)
	if !ok {
		return
	}
	var a stepAnswer
	if !readJSON(w, r, &a) {
		return
	}
	if x.stepper == nil {
		writeError(w, http.StatusConflict, "this run is not stepped")
		return
	}
	code, err := x.stepper.answer(r.Context(), a)
	if err != nil {
		writeError(w, code, err.Error())
		return
	}
	writeJSON(w, code, x.view(false))
}
