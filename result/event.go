package result

import "time"

// EventKind names a point in a run that streaming reporters see as it happens.
type EventKind string

const (
	RunStarted         EventKind = "run-started"
	CollectionStarted  EventKind = "collection-started"
	TestStarted        EventKind = "test-started"
	TestFinished       EventKind = "test-finished"
	CollectionFinished EventKind = "collection-finished"
	RunFinished        EventKind = "run-finished"
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
