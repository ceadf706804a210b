package result

import "time"

// EventKind names a point in a run that streaming reporters see as it happens.
type EventKind string

// The event kinds, in the order a run emits them (the middle four once per collection and test).
const (
	// RunStarted: the run began; Event.Run is set.
	RunStarted EventKind = "run-started"
	// CollectionStarted: a collection began; Event.Run and Event.Collection are set.
	CollectionStarted EventKind = "collection-started"
	// TestStarted: a test began; Event.Test (and its Collection) is set.
	TestStarted EventKind = "test-started"
	// TestFinished: a test ended with its final status; Event.Test is set.
	TestFinished EventKind = "test-finished"
	// CollectionFinished: every test of a collection ended; Event.Collection is set.
	CollectionFinished EventKind = "collection-finished"
	// RunFinished: the run ended; Event.Run holds the whole result.
	RunFinished EventKind = "run-finished"
)

// Event is one point in a run. Only the fields that fit the kind are set; the pointers refer to
// the live result objects, which observers must treat as read-only.
type Event struct {
	Kind       EventKind
	At         time.Time
	Run        *Run
	Collection *Collection
	Test       *Test
}
