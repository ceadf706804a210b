package runner

import (
	"context"
	"time"

	"github.com/mcpspec/mcpspec/result"
)

// eventDrainWait bounds how long Run waits, at its end, for a slow observer to take the events
// still buffered.
const eventDrainWait = 10 * time.Second

// events hands a run's events to the observer on one goroutine, through a bounded buffer:
// emit never blocks, and drops the event (counting it) when the buffer is full.
type events struct {
	r    *Runner
	ch   chan queued
	done chan struct{}
}

// queued is an event, or (ack set) a marker the observer's goroutine acknowledges once every
// event before it was handed over.
type queued struct {
	ev  result.Event
	ack chan struct{}
}

func (r *Runner) startEvents() *events {
	e := &events{r: r}
	if r.opts.OnEvent == nil {
		return e
	}
	e.ch = make(chan queued, r.opts.EventBuffer)
	e.done = make(chan struct{})
	go func() {
		defer close(e.done)
		for q := range e.ch {
			if q.ack != nil {
				close(q.ack)
				continue
			}
			r.opts.OnEvent(q.ev)
		}
	}()
	return e
}

// emit queues ev for the observer without blocking. Only the goroutine running the schedule
// emits (and Run itself, before and after), so emit is never called after close.
func (e *events) emit(ev result.Event) {
	if e.ch == nil {
		return
	}
	select {
	case e.ch <- queued{ev: ev}:
	default:
		e.r.dropped.Add(1)
	}
}

// sync waits (bounded by eventDrainWait and ctx) until the observer has seen every event
// emitted so far; with no observer, or a full buffer, it returns at once.
func (e *events) sync(ctx context.Context) {
	if e.ch == nil {
		return
	}
	ack := make(chan struct{})
	select {
	case e.ch <- queued{ack: ack}:
	default:
		return
	}
	t := time.NewTimer(eventDrainWait)
	defer t.Stop()
	select {
	case <-ack:
	case <-ctx.Done():
	case <-t.C:
	}
}

// close ends the stream and waits (bounded) until the observer has seen every queued event. An
// observer stuck longer than eventDrainWait is left to finish on its own: its goroutine ends as
// soon as the observer returns, since the channel is closed.
func (e *events) close() {
	if e.ch == nil {
		return
	}
	close(e.ch)
	t := time.NewTimer(eventDrainWait)
	defer t.Stop()
	select {
	case <-e.done:
	case <-t.C:
	}
}
